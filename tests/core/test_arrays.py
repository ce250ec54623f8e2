"""The growable arrays under the index: appends in batches equal one array built at once."""

import numpy as np

from mnemoscope.engine.arrays import Column, Rows, SlotMap, distinct, ranges


def test_ranges_concatenates_aranges():
    rng = np.random.default_rng(0)
    cases = [(rng.integers(0, 50, n), rng.integers(0, 5, n)) for n in rng.integers(0, 8, 200)]
    assert cases
    for starts, lengths in cases:
        want = np.concatenate([np.arange(s, s + n) for s, n in zip(starts, lengths)] + [np.zeros(0, dtype=np.int64)])
        assert np.array_equal(ranges(starts, lengths), want)


def test_distinct_gives_what_unique_gives():
    rng = np.random.default_rng(3)
    cases = [np.zeros(0, dtype=np.int64), np.array([5]), np.array([2, 2, 2]), rng.integers(0, 50, 300),
             np.concatenate([np.arange(0, 1000, 3), np.arange(0, 1000, 2)])]
    for values in cases:
        assert np.array_equal(distinct(values), np.unique(values))


def test_columns_and_rows_grow_by_appending():
    col, rows = Column(np.int32), Rows()
    rng = np.random.default_rng(1)
    want_col, want_rows = [], []
    for _ in range(40):
        batch = [(rng.integers(0, 100, k).astype(np.int32), rng.random(k).astype(np.float32)) for k in rng.integers(0, 6, 7)]
        rows.extend(batch)
        want_rows += batch
        col.extend(np.arange(len(batch)))
        want_col += list(range(len(batch)))
    assert np.array_equal(col.view, want_col) and len(rows) == len(want_rows)
    pick = np.array([3, 0, 250, 17])
    lengths, indices, values = rows.gather(pick)
    assert lengths.tolist() == [len(want_rows[p][0]) for p in pick]
    assert np.array_equal(indices, np.concatenate([want_rows[p][0] for p in pick]))
    assert np.array_equal(values, np.concatenate([want_rows[p][1] for p in pick]))


def test_slot_map_is_a_mapping_of_live_ids():
    slots = SlotMap()
    slots.assign(np.array([5, 9, 2]), np.array([0, 1, 2]))
    slots.assign(np.array([40]), np.array([3]))
    slots.drop(np.array([9, 1000]))
    assert dict(slots) == {2: 2, 5: 0, 40: 3} and len(slots) == 3
    assert 9 not in slots and slots.get(9) is None and slots[40] == 3
    assert slots.slots_of([2, 9, -1, 77]).tolist() == [2, -1, -1, -1]
