"""The heuristic tuner moves weights toward what separates relevant candidates."""

import numpy as np

from mnemoscope.engine.eval.tuning import Case, metrics, objective, tune
from mnemoscope.engine.rank.features import feature_names


def test_tuning_raises_the_objective_and_never_touches_learned_weights():
    names = feature_names(())
    rng = np.random.default_rng(0)
    cases = []
    for n in range(40):
        x = rng.uniform(0, 1, (30, len(names)))
        x[:, names.index("trust")] = rng.uniform(0, 1, 30)
        relevant_row = int(rng.integers(30))
        x[relevant_row, names.index("recency")] = 3.0  # only recency (weight 0 in the floor) finds it
        cases.append(Case("locomo", x, list(range(30)), {relevant_row}))
    result = tune(cases, names, rounds=1)
    assert objective(result["after"]) > objective(result["before"])
    assert result["after"]["locomo"]["recall@10"] == 1.0
    assert "trust" not in result["weights"]
    assert metrics(cases, np.zeros(len(names)))["locomo"]["recall@10"] < 1.0
