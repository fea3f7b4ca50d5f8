"""execute_on_instances under mpirun: results, scoping, nesting, and exception propagation."""

import pytest
from mpi4py import MPI

import popdist
from mpi_helpers import RANK, SIZE, needs_ranks


class CustomFailure(Exception):
    pass


def test_scope_outside_is_every_instance():
    assert popdist._mpi.current_scope() == set(range(SIZE))


def test_returns_the_result_on_members_and_none_elsewhere():
    members = {0} if SIZE == 1 else {0, SIZE - 1}
    result = popdist.execute_on_instances(members, lambda a, b=0: (popdist.getInstanceIndex(), a + b), 2, b=3)
    if RANK in members:
        assert result == (RANK, 5)
    else:
        assert result is None


def test_instance_zero_only():
    ran = []
    assert popdist.execute_on_instances({0}, ran.append, "x") is None
    assert ran == (["x"] if RANK == 0 else [])


@needs_ranks(2)
def test_bare_synchronize_and_comm_inside_are_scoped_to_the_set():
    members = {0, 1}

    def body():
        assert popdist._mpi.current_scope() == members
        popdist.synchronize()  # over {0, 1} only: would hang if it meant every instance
        scope = popdist.comm()
        return scope.Get_size(), scope.allreduce(popdist.getInstanceIndex())

    result = popdist.execute_on_instances(members, body)
    assert result == ((2, 1) if RANK in members else None)


@needs_ranks(2)
def test_nested_calls():
    def inner():
        return popdist.comm().Get_size()

    def outer():
        return popdist.execute_on_instances({1}, inner)

    result = popdist.execute_on_instances({0, 1}, outer)
    if RANK == 1:
        assert result == 1
    else:
        assert result is None


@needs_ranks(2)
def test_failure_is_reraised_on_its_instance_and_reported_elsewhere():
    failing = SIZE - 1
    members = {0, failing}
    raised = []

    def body():
        if popdist.getInstanceIndex() == failing:
            error = CustomFailure(f"broken on {failing}")
            raised.append(error)
            raise error
        # (A collective here would hang: the failing member never reaches it. The runtime learns
        # of the failure in the agreement after func returns.)
        return "healthy"

    if RANK == failing:
        with pytest.raises(CustomFailure) as error:
            popdist.execute_on_instances(members, body)
        assert error.value is raised[0]  # the original exception object
    elif RANK in members:
        with pytest.raises(popdist.RemoteExecutionError) as error:
            popdist.execute_on_instances(members, body)
        remote = error.value
        assert remote.instance == failing
        assert remote.exception_type.endswith("CustomFailure")
        assert remote.exception_message == f"broken on {failing}"
        assert str(failing) in str(remote) and "CustomFailure" in str(remote)
    else:
        assert popdist.execute_on_instances(members, body) is None


@needs_ranks(2)
def test_builtin_exception_type_name():
    def body():
        if popdist.getInstanceIndex() == 0:
            raise KeyError("missing-key")

    if RANK == 0:
        with pytest.raises(KeyError):
            popdist.execute_on_instances({0, 1}, body)
    elif RANK == 1:
        with pytest.raises(popdist.RemoteExecutionError) as error:
            popdist.execute_on_instances({0, 1}, body)
        assert (error.value.instance, error.value.exception_type) == (0, "KeyError")
        assert "missing-key" in error.value.exception_message


def test_world_still_usable_after_failures():
    popdist.synchronize()
    assert MPI.COMM_WORLD.allreduce(1) == SIZE


def test_out_of_range_instance_is_a_usage_error():
    with pytest.raises(popdist.UsageError, match=str(SIZE)):
        popdist.execute_on_instances({SIZE}, print)
