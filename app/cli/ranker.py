"""Ranker commands: ``ranker status|reset|export``, ``feedback``, ``eval learning`` and ``eval tune-heuristic``."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from argparse import ArgumentTypeError
from typing import Any, TextIO

from . import core
from .parsing import plain_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ranker", help="the learned ranker: status, reset, export")
    rsub = p.add_subparsers(dest="action", metavar="action", required=True)
    q = rsub.add_parser("status", help="λ, the gate's referee, feedback counts, the learning curve")
    q.add_argument("--json", action="store_true")
    q.set_defaults(handler=status)
    q = rsub.add_parser("reset", help="forget all feedback and learning (records are untouched)")
    q.add_argument("--yes", action="store_true", help="really do it")
    q.set_defaults(handler=reset)
    q = rsub.add_parser("export", help="write the model, feedback log, edges and trust as JSON")
    q.add_argument("file")
    q.set_defaults(handler=export)

    p = sub.add_parser("feedback", help="tell the ranker which hits of a recall were used; list or undo feedback",
                       usage="mnemoscope feedback TOKEN --used IDS [--ignored IDS] | feedback list | feedback undo EVENT")
    p.add_argument("token", help="the token a recall printed (recall --json shows it); or 'list', or 'undo'")
    p.add_argument("event", nargs="?", help="with 'undo': the feedback event to withdraw")
    p.add_argument("--used", default="", help="comma-separated item ids that were used")
    p.add_argument("--ignored", default="", help="comma-separated item ids that were not (default: every other shown hit)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=feedback)


def add_eval_parsers(evsub: argparse._SubParsersAction, data: Path) -> None:
    p = evsub.add_parser("tune-heuristic", help="re-tune the fused heuristic's weights on the dev benchmarks (prints them)")
    p.add_argument("data", nargs="?", default=str(data), help="the shared data folder")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="an engine setting for this run")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=tune_heuristic)

    p = evsub.add_parser("learning", help="simulated feedback on LoCoMo dev: held-out gain, λ, random control")
    p.add_argument("file", nargs="?", default=str(data / "locomo" / "locomo10_dev.json"))
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--curve-every", type=int, default=10, help="measure held-out quality every N feedback events")
    p.add_argument("--repeats", type=int, default=3, help="feedback events in the repeated-query scenario")
    p.add_argument("--paraphrases", metavar="FILE", help="people's rewordings of dev questions (e.g. "
                   "../shared/data/locomo/paraphrases_dev.json): recall@10 of a taught question's rewording")
    p.add_argument("--latency-items", type=int, default=10_000, help="synthetic store size for feedback latency (0: skip)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="an engine setting for this run")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=eval_learning)


def emit(*args: Any) -> None:
    from . import emit as cli_emit  # the package imports this module before it defines emit

    cli_emit(*args)


def _ids(text: str, what: str) -> list[int]:
    from . import UsageError

    try:
        return [plain_int(x.strip()) for x in text.split(",") if x.strip()]
    except ArgumentTypeError:
        raise UsageError(f"--{what} expects comma-separated item ids, got {text!r}") from None


def status(args: argparse.Namespace, out: TextIO) -> int:
    with core.open_memory(args) as mem:
        s = mem.ranker.status()
        emit(out, s.to_dict(), args.json, lambda: _status_text(s))
    return 0


def _status_text(s: Any) -> str:
    g = s.gate
    lines = [f"state {s.state}; λ {s.lam:.3f}; {s.events} feedback event(s), {s.train_pairs} training pair(s), "
             f"{s.held_out_pairs} held-out pair(s), {s.model_steps} SGD step(s)",
             f"gate: model wins {g.model_wins} vs heuristic {g.heuristic_wins} discordant held-out pairs, "
             f"Wilson lower bound {g.lower_bound:.3f}, permutation p {g.p_value:.3f}, {g.queries} held-out query(ies)",
             "λ " + ("open" if s.lam > 0 else "closed") + ": " + "; ".join(g.reasons),
             f"feedback memory: {s.marks} event(s) consulted at every recall",
             f"co-access edges {s.coaccess_edges}; items with trust {s.trusted_items}",
             "heuristic: " + ", ".join(f"{k} {v:+.2f}" for k, v in s.heuristic.items())]
    if s.curve:
        lines.append("curve (event: λ): " + ", ".join(f"{c.event}: {c.lam:.2f}" for c in s.curve[-10:]))
    return "\n".join(lines)


def reset(args: argparse.Namespace, out: TextIO) -> int:
    from . import UsageError

    if not args.yes:
        raise UsageError("ranker reset forgets every feedback event; add --yes to do it")
    with core.open_memory(args) as mem:
        mem.ranker.reset()
    out.write("ranker reset: ranking is the heuristic floor again\n")
    return 0


def export(args: argparse.Namespace, out: TextIO) -> int:
    with core.open_memory(args) as mem:
        data = mem.ranker.export()
    Path(args.file).write_text(json.dumps(data, ensure_ascii=False, default=str), encoding="utf-8")
    out.write(f"ranker exported to {args.file} ({len(data['feedback'])} feedback event(s))\n")
    return 0


def feedback(args: argparse.Namespace, out: TextIO) -> int:
    from . import UsageError

    if args.token == "undo":
        return undo(args, out)
    if args.token == "list":
        return feedback_list(args, out)
    if args.event is not None:
        raise UsageError(f"unexpected argument {args.event!r}: feedback TOKEN --used IDS, feedback list, feedback undo EVENT")
    with core.open_memory(args) as mem:
        r = mem.feedback(args.token, _ids(args.used, "used"), _ids(args.ignored, "ignored"))
    payload = {"event_id": r.event_id, "used": r.used, "ignored": r.ignored, "lambda": r.gate.lam,
               "pairs_trained": r.pairs_trained, "pairs_held_out": r.pairs_held_out, "ms": round(r.ms, 3)}
    emit(out, payload, args.json, f"feedback event {r.event_id}: {len(r.used)} used, {len(r.ignored)} ignored; λ {r.gate.lam:.3f}")
    return 0


def undo(args: argparse.Namespace, out: TextIO) -> int:
    """``feedback undo EVENT``: withdraw one event; its effect is gone at the next recall."""
    event = _event_id(args.event)
    with core.open_memory(args) as mem:
        r = mem.ranker.undo(event)
    text = (f"feedback event {r.event_id} withdrawn ({r.query!r}); λ {r.gate.lam:.3f}" if r.changed else
            f"feedback event {r.event_id} was already withdrawn; nothing changed")
    emit(out, {"event_id": r.event_id, "changed": r.changed, "query": r.query, "withdrawn_at": r.withdrawn_at,
               "lambda": r.gate.lam}, args.json, text)
    return 0


def feedback_list(args: argparse.Namespace, out: TextIO) -> int:
    with core.open_memory(args) as mem:
        events = mem.ranker.feedback_log(50)
    rows = [{"event_id": e.id, "created_at": e.created_at, "query": e.query, "used": e.used, "ignored": e.ignored,
             "withdrawn_at": e.withdrawn_at} for e in events]
    emit(out, rows, args.json, lambda: "\n".join(
        [f"{e.id:>5}  {time.strftime('%Y-%m-%d %H:%M', time.localtime(e.created_at))}  {e.query[:50]!r}  used "
         f"{','.join(map(str, e.used)) or '-'}" + ("  (withdrawn)" if e.withdrawn_at else "") for e in events]
        or ["no feedback yet"]))
    return 0


def _event_id(text: str | None) -> int:
    from . import UsageError

    if text is None:
        raise UsageError("feedback undo needs the event's id (`mnemoscope feedback list` shows them)")
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) < 2 ** 63:
        raise UsageError(f"feedback undo: {text!r} is not an event id (a positive whole number)")
    return int(text)


def eval_learning(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.eval import learning

    from .evaluate import settings_of

    result = learning.evaluate(args.file, seed=args.seed, curve_every=args.curve_every,
                               latency_items=args.latency_items, repeats=args.repeats, paraphrases=args.paraphrases,
                               **settings_of(args.set))
    emit(out, result, args.json, lambda: _learning_text(result))
    return 0


def tune_heuristic(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.eval import tuning

    from .evaluate import settings_of

    cases, names = tuning.collect(Path(args.data), **settings_of(args.set))
    result = tuning.tune(cases, names)
    emit(out, result, args.json, lambda: "\n".join(
        [f"{ds:<8} before {result['before'][ds]}  after {result['after'][ds]}" for ds in result["before"]]
        + ["weights: " + ", ".join(f"{k} {v:+.2f}" for k, v in result["weights"].items())]))
    return 0


def _learning_text(r: dict[str, Any]) -> str:
    b, a = r["before"]["metrics"], r["after"]["metrics"]
    cb, ca = r["control"]["before"], r["control"]["after"]
    lines = [f"learning on {r['dataset']}: {r['conversations']} conversations, {r['feedback_events']} feedback events, "
             f"{r['held_out_questions']} held-out questions",
             f"held-out          recall@10 {b['recall@10']:.4f} → {a['recall@10']:.4f}   ndcg@10 {b['ndcg@10']:.4f} → {a['ndcg@10']:.4f}",
             f"random control    recall@10 {cb['recall@10']:.4f} → {ca['recall@10']:.4f}   ndcg@10 {cb['ndcg@10']:.4f} → {ca['ndcg@10']:.4f}"
             f"   (λ {r['control']['lambda']:.3f})",
             f"λ {r['lambda']:.3f} (per conversation {r['lambda_per_conversation']})",
             f"repeated query ({r['repeated_query_mean_rank']['events']} feedback events): used item's mean rank "
             f"{r['repeated_query_mean_rank']['before']:.2f} → {r['repeated_query_mean_rank']['after']:.2f}",
             f"used items' mean rank, taught questions asked again {r['taught_questions_mean_rank']['before']:.2f} → "
             f"{r['taught_questions_mean_rank']['after']:.2f}; paraphrased (n={r['paraphrased_query_mean_rank']['n']}) "
             f"{r['paraphrased_query_mean_rank']['before']:.2f} → {r['paraphrased_query_mean_rank']['after']:.2f}",
             f"reworded taught questions (n={r['reworded_recall@10']['n']}): recall@10 "
             f"{r['reworded_recall@10']['before']:.4f} → {r['reworded_recall@10']['after']:.4f}",
             "curve (events: λ, held-out ndcg@10 change): " + ", ".join(
                 f"{c['events']}: {c['lambda']:.2f}, {c['ndcg@10_gain']:+.4f}" for c in r["curve"])]
    fm = r["feedback_ms"]
    lines.append(f"feedback latency: LoCoMo p50 {fm['locomo_p50']:.2f} ms" + (
        f"; {fm['synthetic']['items']} items p50 {fm['synthetic']['p50_ms']:.2f} ms, p95 {fm['synthetic']['p95_ms']:.2f} ms"
        f" (CPU p50 {fm['synthetic']['cpu_p50_ms']:.2f} ms); fused recall p50 {fm['synthetic']['recall_p50_ms']:.2f} ms"
        f" → {fm['synthetic']['recall_p50_ms_with_feedback']:.2f} ms with {fm['synthetic']['events']} feedback events"
        if "synthetic" in fm else ""))
    return "\n".join(lines)
