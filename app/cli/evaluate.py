"""Benchmarks: ``eval locomo|miracl|multihop`` (quality) and ``bench`` (speed)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def register(sub: argparse._SubParsersAction) -> None:
    ev = sub.add_parser("eval", help="measure retrieval quality on a benchmark")
    evsub = ev.add_subparsers(dest="dataset", metavar="dataset", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--strategy", default=None)
        p.add_argument("--baseline", action="append", default=[], help="another strategy, or rank_bm25 (repeatable)")
        p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="an engine setting for this run")
        p.add_argument("--core", action="store_true", help="the core alone: no knowledge, topics or ranker extensions")
        p.add_argument("--json", action="store_true")

    p = evsub.add_parser("locomo", help="LoCoMo evidence retrieval")
    p.add_argument("file", nargs="?", default=str(DATA / "locomo" / "locomo10_dev.json"))
    common(p)
    p.set_defaults(handler=eval_locomo)

    p = evsub.add_parser("miracl", help="MIRACL-ko passage retrieval (+ perturbations)")
    p.add_argument("dir", nargs="?", default=str(DATA / "miracl_ko"))
    common(p)
    p.set_defaults(handler=eval_miracl)

    p = evsub.add_parser("multihop", help="MuSiQue / HotpotQA supporting-passage recall")
    p.add_argument("corpus", nargs="?", default=str(DATA / "multihop" / "musique_corpus.json"))
    p.add_argument("questions", nargs="?", default=None)
    common(p)
    p.set_defaults(handler=eval_multihop)

    p = evsub.add_parser("updates", help="knowledge updates: evidence current at each question's time")
    p.add_argument("file", nargs="?", default=None, help="default: the team's bench/data/knowledge_updates.json")
    p.add_argument("--no-as-of", action="store_true", help="ask without the questions' reference times")
    common(p)
    p.set_defaults(handler=eval_updates)

    p = evsub.add_parser("supersession", help="precision of the supersession rules against hand judgements")
    p.add_argument("file", nargs="?", default=str(DATA / "locomo" / "locomo10_dev.json"), help="LoCoMo dev")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=eval_supersession)

    from .ranker import add_eval_parsers  # the learning benchmark and heuristic tuning live with the ranker

    add_eval_parsers(evsub, DATA)

    p = sub.add_parser("bench", help="synthetic scale benchmark (ingest, latency, memory)")
    p.add_argument("--items", type=int, default=10_000)
    p.add_argument("--strategies", default="bm25,dense,hybrid")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--core", action="store_true", help="the core alone: no knowledge, topics or ranker extensions")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=bench)


def settings_of(pairs: list[str]) -> dict[str, Any]:
    from . import UsageError

    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise UsageError(f"--set expects NAME=VALUE, got {pair!r}")
        out[name.strip()] = value.strip()
    return out


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--set`` settings, plus ``extensions=False`` for ``--core``."""
    return {**settings_of(args.set), **({"extensions": False} if args.core else {})}


def _strategy(args: argparse.Namespace) -> str:
    from mnemoscope.engine.config import Settings

    return args.strategy or Settings.load(**settings_of(args.set)).default_strategy


def eval_locomo(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.eval import locomo

    result = locomo.evaluate(args.file, _strategy(args), args.baseline, **engine_options(args))
    _print(out, result, args.json)
    return 0


def eval_miracl(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.eval import miracl

    result = miracl.evaluate(args.dir, _strategy(args), args.baseline, **engine_options(args))
    _print(out, result, args.json)
    return 0


def eval_multihop(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.eval import multihop

    questions = args.questions or args.corpus.replace("_corpus", "_questions")
    result = multihop.evaluate(args.corpus, questions, _strategy(args), args.baseline, **engine_options(args))
    _print(out, result, args.json)
    return 0


def eval_updates(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.eval import updates

    result = updates.evaluate(args.file or updates.DATA, _strategy(args), args.baseline, as_of=not args.no_as_of,
                              **engine_options(args))
    if args.json:
        out.write(json.dumps(result) + "\n")
        return 0
    rows = [(result["strategy"], result)] + list(result.get("baselines", {}).items())
    out.write(f"{result['dataset']}: {result['n_questions']} questions, "
              f"{'as of each question' if result['as_of'] else 'no reference time'}\n")
    out.write(f"{'system':<12}{'recall@5':>10}{'recall@10':>11}{'stale above':>16}{'q p50 ms':>10}\n")
    for name, r in rows:
        m = r["metrics"]
        out.write(f"{name:<12}{m['recall@5']:>10.4f}{m['recall@10']:>11.4f}"
                  f"{_share(m['stale_above'], m['n_stale']):>16}{r['query_ms_p50']:>10.2f}\n")
        for cat, c in r["by_category"].items():
            out.write(f"  {cat:<13} n={c['n']:<4} recall@5 {c['recall@5']:.4f}"
                      + (f"  stale above {_share(c['stale_above'], c['n_stale'])}" if c["n_stale"] else "") + "\n")
    known = result["changes_recognised"]
    out.write(f"changes the supersession rules recognised (update questions): {_share(known['share'], known['n'])};"
              f" stale above among them ({result['strategy']}): "
              f"{_share(result['metrics']['recognised_above'], result['metrics']['n_recognised'])}\n")
    return 0


def eval_supersession(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.eval import supersession

    result = supersession.evaluate(args.file)
    if args.json:
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
        return 0
    out.write(f"judgements: {result['judgements']}\n")
    for name, r in result["corpora"].items():
        precision = "-" if r["precision"] is None else f"{r['precision']:.3f}"
        out.write(f"{name:<8} supersessions {r['supersessions']:>3} (sampled {r['sampled']}): right {r['right']}, "
                  f"wrong {r['wrong']}, precision {precision}; conflicts {r['conflicts']} "
                  f"({r['conflicts_sensible']} judged sensible); unjudged {len(r['unjudged'])}\n")
        for pair in r["unjudged"]:
            out.write(f"  unjudged: {supersession.identity(pair)}\n")
    return 0


def _share(rate: float | None, n: int) -> str:
    return "-" if rate is None else f"{rate:.3f} ({round(rate * n)}/{n})"


def bench(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.eval import bench as bench_mod

    result = bench_mod.run(args.items, [s for s in args.strategies.split(",") if s], args.queries,
                           extensions=not args.core, **settings_of(args.set))
    if args.json:
        out.write(json.dumps(result) + "\n")
        return 0
    out.write(f"items {result['items']}: ingest {result['ingest_ms_per_item']} ms/item "
              f"({result['ingest_cpu_ms_per_item']} ms CPU), open {result['open_s']} s, peak RSS {result['peak_rss_mb']} MB\n")
    for name, t in result["recall_ms"].items():
        out.write(f"  recall {name:<8} p50 {t['p50']:8.3f} ms   p95 {t['p95']:8.3f} ms   CPU p50 {t['cpu_p50']:8.3f} ms\n")
    b = result["baselines"]["rank_bm25"]
    out.write(f"  rank_bm25       index {b['index_ms_per_item']} ms/item, query p50 {b['query_ms_p50']} ms\n")
    return 0


def _print(out: TextIO, result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        out.write(json.dumps(result) + "\n")
        return
    rows = [(result["strategy"], result)] + [(n, r) for n, r in result.get("baselines", {}).items()]
    names = list(result["metrics"])
    out.write(f"{result['dataset']}: {result['n_questions']} questions\n")
    out.write(f"{'system':<14}" + "".join(f"{n:>11}" for n in names) + f"{'q p50 ms':>10}{'idx ms/it':>10}\n")
    for name, r in rows:
        out.write(f"{name:<14}" + "".join(f"{r['metrics'][n]:>11.4f}" for n in names)
                  + f"{r['timing']['query_ms_p50']:>10.2f}{r['timing']['index_ms_per_item']:>10.3f}\n")
    for cat, m in result.get("by_category", {}).items():
        out.write(f"  category {cat} (n={m['n']}): " + ", ".join(f"{n} {m[n]:.4f}" for n in names) + "\n")
    for axis, p in result.get("perturbations", {}).items():
        out.write(f"  {axis:<10} n={p['n']:<4} hit@5 {p['metrics']['hit@5']:.4f} (Δ {p['delta']['hit@5']:+.4f})"
                  f"  ndcg@10 {p['metrics']['ndcg@10']:.4f} (Δ {p['delta']['ndcg@10']:+.4f})\n")
