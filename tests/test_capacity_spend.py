"""The meter's request path over its leases (partita/engine/capacity/spend.py): the C accelerator and its Python fallback agree.

In-process, no server: both run over real `Resource`s (partition maps with
their lookup tables and state arrays) and real `ItemAction`s, and must
answer the same and leave the same tokens and sampling debt, to the bit.
The server tests (test_throughput.py, test_contributor_insights.py) run requests and
batches through whichever is installed.
"""

from __future__ import annotations

from array import array
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from partita.engine.items.actions import ActionKind, ItemAction

from partita.engine.capacity import spend
from partita.engine.capacity.buckets import READ, WRITE
from partita.engine.capacity.partitions import HASH_OFFSET, HASH_SPACE
from partita.engine.capacity.resources import DEBT_AT, LEVEL_AT, Resource, tokens_at
from partita.engine.capacity.spend import DONE, SAMPLE, SHORT, py_one, py_writes
from partita.engine.capacity.units import write_need

ACCELERATED = pytest.mark.skipif(not spend.ACCELERATED, reason="the C accelerator is not built")
IMPLEMENTATIONS = [
    pytest.param(py_writes, id="python"),
    pytest.param(spend.writes, id="accelerated", marks=ACCELERATED),
]
ONE = [pytest.param(py_one, id="python"), pytest.param(spend.one, id="accelerated", marks=ACCELERATED)]
_TABLES = (object(), object())
_TOKENS = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, 7.5, 100.0, 100.0, 100.0, 100.0])  # mostly enough to pay


def resource(starts: list[int], exact: bool) -> Resource:
    return Resource(1, "Table", "", "arn", 1, starts, True, (0.0, 0.0), (None, None), 0.0, exact)


def row_of(hash_value: int, tail: bytes) -> bytes:
    return b"\x01" * HASH_OFFSET + hash_value.to_bytes(8, "big") + tail


@st.composite
def batches(draw: Any) -> tuple[Resource, list[ItemAction], list[tuple[Any, Any]], list[float]]:
    cuts = draw(st.lists(st.integers(1, HASH_SPACE - 1), max_size=40, unique=True))
    res = resource([0, *sorted(cuts)], draw(st.booleans()))
    # Some hashes at the partitions' boundaries, where the lookup says AMBIGUOUS and `number` bisects.
    hashes = st.one_of(st.integers(0, HASH_SPACE - 1), st.sampled_from(res.starts),
                       st.sampled_from(res.starts).map(lambda start: max(0, start - 1)))
    actions, resolved = [], []
    for _ in range(draw(st.integers(0, 25))):
        old_size, new_size = draw(st.integers(0, 400_000)), draw(st.integers(0, 400_000))
        actions.append(ItemAction(ActionKind.PUT, draw(st.sampled_from(_TABLES)), row_of(draw(hashes), b"k"),
                                  draw(st.sampled_from([None, {"pk": {"S": "k"}}])), old_size=old_size,
                                  new_size=new_size))
        resolved.append((draw(st.sampled_from([None, {"old": 1}])), draw(st.sampled_from([None, {"new": 1}]))))
    tokens = draw(st.lists(_TOKENS, min_size=len(res.state), max_size=len(res.state)))
    return res, actions, resolved, tokens


def run(writes: Any, res: Resource, actions: list[ItemAction], resolved: list[tuple[Any, Any]],
        tokens: list[float]) -> tuple[list[tuple[int, int, float]], list[float]]:
    """Drive `writes` over the whole batch as the meter does, skipping what it cannot pay."""
    res.state = array("d", tokens)
    answers = []
    position = 0
    while position < len(actions):
        table = actions[position].table
        status, position, units = writes(res, table, actions, resolved, position)
        answers.append((status, position, units))
        if status == SHORT:
            position += 1
    return answers, list(res.state)


@settings(max_examples=400, deadline=None)
@given(batches())
def test_both_implementations_spend_alike(batch: Any) -> None:
    if not spend.ACCELERATED:
        pytest.skip("the C accelerator is not built")
    res, actions, resolved, tokens = batch
    assert run(spend.writes, res, actions, resolved, tokens) == run(py_writes, res, actions, resolved, tokens)


@pytest.mark.parametrize("writes", IMPLEMENTATIONS)
def test_a_run_debits_each_write_from_its_partition_and_the_table(writes: Any) -> None:
    res = resource([0, 1 << 63], exact=False)
    low, high = row_of(5, b"a"), row_of((1 << 63) + 5, b"b")
    table = _TABLES[0]
    actions = [ItemAction(ActionKind.PUT, table, row, {"pk": {"S": "k"}}, old_size=0, new_size=size)
               for row, size in [(low, 1500), (high, 1025), (low, 3000), (high, 0)]]
    resolved: list[tuple[Any, Any]] = [(None, {"n": 1})] * 3 + [({"o": 1}, None)]  # the last one a delete
    res.state[LEVEL_AT + WRITE] = 100.0
    res.state[tokens_at(0, WRITE)] = 10.0
    res.state[tokens_at(1, WRITE)] = 10.0
    # 2 + 2 + 3 + 1 units: 8 is the sampling interval, so the fourth write is due in the ranking.
    assert writes(res, table, actions, resolved, 0) == (SAMPLE, 4, 8.0)
    assert res.state[tokens_at(0, WRITE)] == 5.0  # 2 + 3
    assert res.state[tokens_at(1, WRITE)] == 7.0  # 2 + 1 (a delete of a stored item is at least one unit)
    assert (res.state[LEVEL_AT + WRITE], res.state[DEBT_AT + WRITE]) == (92.0, 0.0)
    assert writes(res, table, actions, resolved, 4) == (DONE, 4, 0.0)


@pytest.mark.parametrize("writes", IMPLEMENTATIONS)
def test_a_run_stops_short_of_what_the_leases_cannot_pay_and_at_another_table(writes: Any) -> None:
    res = resource([0], exact=True)
    first, second = _TABLES
    actions = [ItemAction(ActionKind.PUT, first, row_of(1, b""), None, new_size=2048),
               ItemAction(ActionKind.PUT, first, row_of(2, b""), None, new_size=2049),
               ItemAction(ActionKind.PUT, second, row_of(3, b""), None, new_size=1)]
    resolved: list[tuple[Any, Any]] = [(None, {"n": 1})] * 3
    res.state[LEVEL_AT + WRITE] = 4.0
    res.state[tokens_at(0, WRITE)] = 50.0
    assert writes(res, first, actions, resolved, 0) == (SHORT, 1, 3.0)
    assert res.state[LEVEL_AT + WRITE] == 2.0  # the table's lease paid the first write, not the second
    res.state[LEVEL_AT + WRITE] = 3.0
    assert writes(res, first, actions, resolved, 1) == (DONE, 2, 0.0)
    assert res.state[tokens_at(0, WRITE)] == 45.0


def test_write_need_is_the_larger_item_in_kilobytes() -> None:
    action = ItemAction(ActionKind.PUT, _TABLES[0], row_of(0, b""), None, old_size=3000, new_size=1024)
    assert write_need(action, {"o": 1}, {"n": 1}) == 3.0
    assert write_need(action, None, {"n": 1}) == 1.0
    assert write_need(action, None, None) == 1.0


@st.composite
def requests(draw: Any) -> tuple[Resource, list[tuple[int, bytes, float, Any]], list[float]]:
    cuts = draw(st.lists(st.integers(1, HASH_SPACE - 1), max_size=40, unique=True))
    res = resource([0, *sorted(cuts)], draw(st.booleans()))
    hashes = st.one_of(st.integers(0, HASH_SPACE - 1), st.sampled_from(res.starts))
    asked = [(draw(st.sampled_from([READ, WRITE])), row_of(draw(hashes), b""),
              draw(st.sampled_from([0.5, 1.0, 2.0, 7.5, 8.0, 40.0])), draw(st.sampled_from([None, {"pk": {"N": "1"}}])))
             for _ in range(draw(st.integers(1, 30)))]
    tokens = draw(st.lists(_TOKENS, min_size=len(res.state), max_size=len(res.state)))
    return res, asked, tokens


@settings(max_examples=300, deadline=None)
@given(requests())
def test_both_implementations_spend_a_request_alike(case: Any) -> None:
    if not spend.ACCELERATED:
        pytest.skip("the C accelerator is not built")
    res, asked, tokens = case
    answers = []
    for one in (spend.one, py_one):
        res.state = array("d", tokens)
        answers.append(([one(res, dim, row, units, key) for dim, row, units, key in asked], list(res.state)))
    assert answers[0] == answers[1]


@pytest.mark.parametrize("one", ONE)
def test_one_request_is_paid_sampled_or_refused(one: Any) -> None:
    res = resource([0, 1 << 63], exact=False)
    row, key = row_of((1 << 63) + 1, b""), {"pk": {"S": "k"}}
    res.state[LEVEL_AT + READ] = 10.0
    res.state[tokens_at(1, READ)] = 9.0
    assert one(res, READ, row, 4.0, key) == 0.0  # paid; 4 units owed to the ranking
    assert one(res, READ, row, 4.0, None) == 0.0  # paid; no key, nothing owed
    assert one(res, READ, row, 3.0, key) == -1.0  # the partition's lease holds 1 unit: refused, nothing debited
    assert list(res.state[:2]) == [2.0, 0.0] and res.state[tokens_at(1, READ)] == 1.0
    assert one(res, READ, row, 1.0, key) == 0.0
    assert res.state[DEBT_AT + READ] == 5.0  # 4 + 1: under the 8 units between samples
    assert one(res, READ, row, 3.0, key) == -1.0  # now the table's lease (1 unit) refuses it
    res.state[LEVEL_AT + READ] = 10.0
    res.state[tokens_at(1, READ)] = 9.0
    assert one(res, READ, row, 3.0, key) == 8.0  # the debt reaches 8: ranked with it, and reset
    assert res.state[DEBT_AT + READ] == 0.0
    assert res.state[tokens_at(0, READ)] == 0.0  # the other partition's lease was never touched
    res.exact = True
    assert one(res, READ, row, 2.0, key) == 2.0  # Contributor Insights: every request with its own units


@pytest.mark.parametrize("bad", [{"state": array("f", [0.0] * 8)}, {"lookup": array("l", [0])}, {"shift": 17}])
@ACCELERATED
def test_the_accelerator_refuses_foreign_arrays(bad: dict[str, Any]) -> None:
    res = resource([0], exact=False)
    for name, value in bad.items():
        setattr(res, name, value)
    with pytest.raises((TypeError, ValueError)):
        spend.writes(res, _TABLES[0], [], [], 0)
    with pytest.raises((TypeError, ValueError)):
        spend.one(res, READ, row_of(0, b""), 1.0, None)


@ACCELERATED
def test_the_accelerator_refuses_a_row_without_its_hash() -> None:
    res = resource([0], exact=False)
    with pytest.raises(IndexError):
        spend.one(res, READ, b"short", 1.0, None)
    with pytest.raises(IndexError):
        py_one(res, READ, b"short", 1.0, None)


def test_the_install_built_the_accelerator() -> None:
    """`pip install` (./dev) compiles _spend.c; without it the emulation costs BatchWriteItem about twice as much.

    It fails where gcc is missing: the server still works then, on spend.py's Python.
    """
    assert spend.ACCELERATED
