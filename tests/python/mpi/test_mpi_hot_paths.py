"""The hot paths of synchronize() and execute_on_instances() (fast enough to compete with a bare MPI barrier) keep every semantic of the
checked paths: once popdist._mpi is loaded, synchronize() without arguments or with an id only
goes straight to a dedicated binding, and execute_on_instances() hands its arguments to the
binding, which checks them itself (before any MPI) with the Python layer's messages."""


import pytest

import popdist
from mpi_helpers import RANK, SIZE, needs_ranks, run_while_ticking

EVERYONE = set(range(SIZE))


class Name(str):
    """A str subclass: not the hot path's exact str, still a valid id."""


def test_every_spelling_of_the_scope_barrier_works():
    popdist.synchronize()
    popdist.synchronize("")
    popdist.synchronize(communicator_id="")
    popdist.synchronize(participants=frozenset())
    popdist.synchronize("", set(), None)


def test_ids_by_position_keyword_and_str_subclass_name_the_same_set():
    popdist.registerCommunicator(EVERYONE, "hot-path-everyone")
    popdist.synchronize("hot-path-everyone")
    popdist.synchronize(communicator_id="hot-path-everyone")
    popdist.synchronize(Name("hot-path-everyone"))


def test_unknown_id_on_the_hot_path_is_a_usage_error_naming_it():
    with pytest.raises(popdist.UsageError, match="hot-path-no-such-id"):
        popdist.synchronize("hot-path-no-such-id")


def test_bare_synchronize_inside_execute_on_instances_is_scoped():
    members = {0}  # a bare synchronize() over every instance here would hang the others
    assert popdist.execute_on_instances(members, popdist.synchronize) is None
    assert popdist.execute_on_instances(members, popdist.synchronize, "") is None


@pytest.mark.parametrize(
    ("instances", "func", "named"),
    [
        ([0, 0], print, r"^execute_on_instances: duplicate participant 0 in \[0, 0\]"),
        ((0, 1, 1) if SIZE > 1 else (0, 0), print, r"^execute_on_instances: duplicate participant \d"),
        ([SIZE], print, rf"^execute_on_instances: participant {SIZE} out of range: valid instance indices are 0\.\.{SIZE - 1}"),
        ([True], print, "instances must hold integer instance indices, got True"),
        ({0, "1"}, print, "instances must hold integer instance indices, got '1'"),
        ([0.0], print, "got 0.0"),
        (5, print, "instances must be an iterable"),
        ("0", print, "instances must be an iterable"),
        ([2**70], print, f"participant {2**70} out of range"),
        ({0}, "print", "func must be callable, got 'print'"),
    ],
)
def test_execute_on_instances_checks_in_the_binding_name_the_argument(instances, func, named):
    assert popdist.isBackendInitialized()  # the binding-side checks, not the Python fallback
    with pytest.raises(popdist.UsageError, match=named):
        popdist.execute_on_instances(instances, func)


def test_execute_on_instances_accepts_any_iterable_of_ints():
    ordered = sorted(EVERYONE, reverse=True)
    shapes = [EVERYONE, frozenset(EVERYONE), ordered, tuple(ordered), range(SIZE), (i for i in ordered)]
    numpy = None
    try:
        import numpy
    except ImportError:
        pass
    if numpy is not None:
        shapes.append(numpy.arange(SIZE))
    for instances in shapes:
        assert popdist.execute_on_instances(instances, lambda a, b=0: a + b, RANK, b=1) == RANK + 1, instances


def test_execute_on_instances_passes_args_and_kwargs_unchanged():
    def echo(*args, **kwargs):
        return args, kwargs

    assert popdist.execute_on_instances(EVERYONE, echo) == ((), {})
    assert popdist.execute_on_instances(EVERYONE, echo, 1, [2], key="v") == ((1, [2]), {"key": "v"})



@needs_ranks(2)
def test_synchronize_by_id_releases_the_gil():
    popdist.registerCommunicator(EVERYONE, "hot-path-gil")
    ticks = run_while_ticking(lambda: popdist.synchronize("hot-path-gil"))
    if RANK != 0:
        assert ticks >= 10, "the ticker thread did not run while synchronize(id) waited"


@needs_ranks(2)
def test_execute_on_instances_releases_the_gil_while_waiting_for_the_outcome():
    ticks = run_while_ticking(lambda: popdist.execute_on_instances(EVERYONE, lambda: None))
    if RANK != 0:
        assert ticks >= 10, "the ticker thread did not run while execute_on_instances waited"
