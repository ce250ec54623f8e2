"""Benchmarks, every one of them: ``eval locomo|miracl|multihop`` (retrieval quality), ``eval updates``
and ``eval supersession`` (facts through time), ``eval extraction`` (the rule extractor), ``eval learning``
and ``eval tune-heuristic`` (the ranker), and ``bench`` (speed)."""

from __future__ import annotations

import argparse
import sys
import json
from pathlib import Path
from typing import Any, TextIO

from .common import DATA, UsageError, emit, json_option, settings_of


def register(sub: argparse._SubParsersAction) -> None:
    ev = sub.add_parser("eval", help="measure retrieval quality on a benchmark")
    ev.set_defaults(without_demo="eval reads its own data into stores of its own: --demo has no meaning there")
    evsub = ev.add_subparsers(dest="dataset", metavar="dataset", required=True)

    def retrieval(p: argparse.ArgumentParser) -> None:
        p.add_argument("--strategy", default=None, help="the strategy measured (default: the default_strategy setting)")
        p.add_argument("--baseline", action="append", default=[], help="another strategy, or rank_bm25 (repeatable)")
        p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="an engine setting for this run")
        p.add_argument("--core", action="store_true", help="the core alone: no knowledge, topics or ranker extensions")
        json_option(p)

    p = evsub.add_parser("locomo", help="LoCoMo evidence retrieval")
    p.add_argument("file", nargs="?", default=str(DATA / "locomo" / "locomo10_dev.json"), help="default: LoCoMo dev")
    p.add_argument("--paraphrases", metavar="FILE", default=None,
                   help="reworded questions (e.g. ../shared/data/locomo/paraphrases_dev.json): "
                        "original and reworded figures side by side")
    p.add_argument("--samples", default="", metavar="IDS", help="only these conversations (comma-separated sample ids)")
    retrieval(p)
    p.set_defaults(handler=eval_locomo)

    p = evsub.add_parser("miracl", help="MIRACL-ko passage retrieval (+ perturbations)")
    p.add_argument("dir", nargs="?", default=str(DATA / "miracl_ko"), help="default: the shared MIRACL-ko folder")
    retrieval(p)
    p.set_defaults(handler=eval_miracl)

    p = evsub.add_parser("multihop", help="MuSiQue / HotpotQA supporting-passage recall")
    p.add_argument("corpus", nargs="?", default=str(DATA / "multihop" / "musique_corpus.json"),
                   help="default: MuSiQue's corpus (hotpotqa_corpus.json beside it for HotpotQA)")
    p.add_argument("questions", nargs="?", default=None, help="default: the corpus file named with _questions for _corpus")
    retrieval(p)
    p.set_defaults(handler=eval_multihop)

    p = evsub.add_parser("updates", help="knowledge updates: evidence current at each question's time")
    p.add_argument("file", nargs="?", default=None, help="default: the team's bench/data/knowledge_updates.json")
    p.add_argument("--no-as-of", action="store_true", help="ask without the questions' reference times")
    retrieval(p)
    p.set_defaults(handler=eval_updates)

    p = evsub.add_parser("supersession", help="precision of the supersession rules against hand judgements")
    p.add_argument("file", nargs="?", default=str(DATA / "locomo" / "locomo10_dev.json"), help="LoCoMo dev")
    p.add_argument("--sample", type=int, default=50, help="supersessions sampled per corpus and from all pooled")
    p.add_argument("--seed", type=int, default=16, help="the seed of the samples")
    json_option(p)
    p.set_defaults(handler=eval_supersession)

    p = evsub.add_parser("extraction", help="rule extractor vs LoCoMo's observation and event annotations")
    p.add_argument("file", nargs="?", default=str(DATA / "locomo" / "locomo10_dev.json"), help="default: LoCoMo dev")
    json_option(p)
    p.set_defaults(handler=eval_extraction)

    p = evsub.add_parser("tune-heuristic", help="re-tune the fused heuristic's weights on the dev benchmarks (prints them)")
    p.add_argument("data", nargs="?", default=str(DATA), help="the shared data folder")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="an engine setting for this run")
    json_option(p)
    p.set_defaults(handler=tune_heuristic)

    p = evsub.add_parser("learning", help="simulated feedback on LoCoMo dev: held-out gain, λ, random control")
    p.add_argument("file", nargs="?", default=str(DATA / "locomo" / "locomo10_dev.json"), help="default: LoCoMo dev")
    p.add_argument("--seed", type=int, default=7, help="the seed of the simulated choices and the random control")
    p.add_argument("--curve-every", type=int, default=10, help="measure held-out quality every N feedback events")
    p.add_argument("--repeats", type=int, default=3, help="feedback events in the repeated-query scenario")
    p.add_argument("--paraphrases", metavar="FILE", help="people's rewordings of dev questions (e.g. "
                   "../shared/data/locomo/paraphrases_dev.json): recall@10 of a taught question's rewording")
    p.add_argument("--latency-items", type=int, default=10_000, help="synthetic store size for feedback latency (0: skip)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="an engine setting for this run")
    json_option(p)
    p.set_defaults(handler=eval_learning)

    p = sub.add_parser("bench", help="synthetic scale benchmark (ingest, latency, memory)")
    p.add_argument("--items", type=int, default=10_000, help="synthetic turns to ingest (default: 10,000)")
    p.add_argument("--strategies", default="bm25,dense,hybrid", help="the strategies timed, comma-separated")
    p.add_argument("--queries", type=int, default=200, help="questions timed per strategy (default: 200)")
    p.add_argument("--core", action="store_true", help="the core alone: no knowledge, topics or ranker extensions")
    p.add_argument("--no-baseline", action="store_true", help="leave out rank_bm25 (it needs hours and gigabytes at a million items)")
    p.add_argument("--keep", type=Path, metavar="STORE", help="keep the store built here (a new file) to time other code on it: bench/store_p50.py")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="an engine setting for this run")
    json_option(p)
    p.set_defaults(handler=bench, without_demo="bench builds a synthetic store of its own: --demo has no meaning there")


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--set`` settings, plus ``extensions=False`` for ``--core``."""
    return {**settings_of(args.set), **({"extensions": False} if args.core else {})}


def _strategy(args: argparse.Namespace) -> str:
    """The strategy asked for, else the configured one; under ``--core`` the built-in default needs
    the ranker, so the core's best, ``hybrid``, as ``Memory.default_strategy`` chooses."""
    from mnemoscope.engine.config import Settings

    if args.strategy:
        return args.strategy
    configured = Settings.load(**settings_of(args.set)).default_strategy
    return "hybrid" if args.core and configured == Settings.default_strategy else configured


def eval_locomo(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.eval import locomo

    samples = [s.strip() for s in args.samples.split(",") if s.strip()]
    result = locomo.evaluate(args.file, _strategy(args), args.baseline, paraphrases=args.paraphrases, samples=samples,
                             **engine_options(args))
    if args.paraphrases and not args.json:
        _print_reworded(out, result)
    else:
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
    emit(out, result, args.json, lambda: _updates_text(result))
    return 0


def _updates_text(result: dict[str, Any]) -> str:
    rows = [(result["strategy"], result)] + list(result.get("baselines", {}).items())
    lines = [f"{result['dataset']}: {result['n_questions']} questions, "
             f"{'as of each question' if result['as_of'] else 'no reference time'}",
             f"{'system':<12}{'recall@5':>10}{'recall@10':>11}{'stale above':>16}{'q p50 ms':>10}"]
    for name, r in rows:
        m = r["metrics"]
        lines.append(f"{name:<12}{m['recall@5']:>10.4f}{m['recall@10']:>11.4f}"
                     f"{_share(m['stale_above'], m['n_stale']):>16}{r['query_ms_p50']:>10.2f}")
        for cat, c in r["by_category"].items():
            lines.append(f"  {cat:<13} n={c['n']:<4} recall@5 {c['recall@5']:.4f}"
                         + (f"  stale above {_share(c['stale_above'], c['n_stale'])}" if c["n_stale"] else ""))
    known = result["changes_recognised"]
    lines.append(f"changes the supersession rules recognised (update questions): {_share(known['share'], known['n'])};"
                 f" stale above among them ({result['strategy']}): "
                 f"{_share(result['metrics']['recognised_above'], result['metrics']['n_recognised'])}")
    return "\n".join(lines)


def eval_supersession(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.eval import supersession

    if args.sample < 1:
        raise UsageError("--sample must be at least 1")
    result = supersession.evaluate(args.file, sample=args.sample, seed=args.seed)
    lines = [f"judgements: {result['judgements']}"]
    for name, r in result["corpora"].items():
        lines.append(f"{name:<8} supersessions {r['supersessions']:>3} (sampled {r['sampled']}): "
                     f"{_judged(r)}; conflicts {r['conflicts']} "
                     f"({r['conflicts_sensible']} judged sensible); unjudged {len(r['unjudged'])}")
        lines += [f"  unjudged: {supersession.identity(pair)}" for pair in r["unjudged"]]
    pooled = result["pooled"]
    lines.append(f"pooled   supersessions {pooled['supersessions']:>3} (sampled {pooled['sampled']}, seed "
                 f"{pooled['seed']}): {_judged(pooled)}")
    lines += [f"  {s['judgement'] or 'unjudged':<8} {s['corpus']}: {s['pair']}" for s in pooled["sample"]]
    emit(out, result, args.json, lambda: "\n".join(lines))
    return 0


def _judged(r: dict) -> str:
    precision = "-" if r["precision"] is None else f"{r['precision']:.3f}"
    return f"right {r['right']}, wrong {r['wrong']}, precision {precision}"


def _share(rate: float | None, n: int) -> str:
    return "-" if rate is None else f"{rate:.3f} ({round(rate * n)}/{n})"


def eval_extraction(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.eval import extraction

    result = extraction.evaluate(args.file)
    emit(out, result, args.json, lambda: extraction.describe(result))
    return 0


def eval_learning(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.eval import learning

    result = learning.evaluate(args.file, seed=args.seed, curve_every=args.curve_every,
                               latency_items=args.latency_items, repeats=args.repeats, paraphrases=args.paraphrases,
                               **settings_of(args.set))
    emit(out, result, args.json, lambda: _learning_text(result))
    return 0


def tune_heuristic(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.eval import tuning

    cases, names = tuning.collect(Path(args.data), **settings_of(args.set))
    result = tuning.tune(cases, names)
    emit(out, result, args.json, lambda: "\n".join(
        [f"{ds:<8} before {result['before'][ds]}  after {result['after'][ds]}" for ds in result["before"]]
        + ["weights: " + ", ".join(f"{k} {v:+.2f}" for k, v in result["weights"].items())]))
    return 0


def bench(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.eval import bench as bench_mod

    result = bench_mod.run(args.items, [s for s in args.strategies.split(",") if s], args.queries,
                           extensions=not args.core, baseline=not args.no_baseline, keep=args.keep,
                           say=lambda line: print(line, file=sys.stderr, flush=True), **settings_of(args.set))
    if args.json:
        out.write(json.dumps(result) + "\n")
        return 0
    out.write(f"items {result['items']}: ingest {result['ingest_ms_per_item']} ms/item "
              f"({result['ingest_cpu_ms_per_item']} ms CPU); the core's phase {result['ingest_core_ms_per_item']} ms/item "
              f"({result['ingest_core_cpu_ms_per_item']} ms CPU), the areas' {result['ingest_areas_s']} s\n")
    if "recall_during_areas_ms" in result:
        d = result["recall_during_areas_ms"]
        out.write(f"  recall while the areas read: hybrid p50 {d['p50']} ms, max {d['max']} ms ({d['n']} recalls)\n")
    out.write(f"  peak RSS {result['peak_rss_ingest_mb']} MB ingesting; a fresh process opens the store in {result['open_s']} s ({result['open_cpu_s']} s CPU"
              f"{', from its saved index' if result['open_from_saved_index'] else ''}) "
              f"(first recall at {result['open_first_recall_s']} s), {result['open_rss_mb']} MB after every strategy\n")
    for name, t in result["recall_ms"].items():
        out.write(f"  recall {name:<8} p50 {t['p50']:8.3f} ms   p95 {t['p95']:8.3f} ms   CPU p50 {t['cpu_p50']:8.3f} ms\n")
    if "baselines" in result:
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


def _print_reworded(out: TextIO, result: dict[str, Any]) -> None:
    """Each system's figures on the original and the reworded questions, side by side, then by category."""
    rows = [(result["strategy"], result)] + list(result.get("baselines", {}).items())
    names = list(result["metrics"])
    out.write(f"{result['dataset']}: {result['n_questions']} questions, original → reworded\n")
    out.write(f"{'system':<14}" + "".join(f"{n:>20}" for n in names) + f"{'q p50 ms':>10}\n")
    for name, r in rows:
        pairs = "".join(f"{r['metrics'][n]:>11.4f} →{r['reworded']['metrics'][n]:>7.4f}" for n in names)
        out.write(f"{name:<14}{pairs}{r['timing']['query_ms_p50']:>10.2f}\n")
    for name, r in rows:
        for cat, m in r["by_category"].items():
            moved = r["reworded"]["by_category"][cat]
            out.write(f"  {name} category {cat} (n={m['n']}): "
                      + ", ".join(f"{n} {m[n]:.4f} → {moved[n]:.4f}" for n in names) + "\n")


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
