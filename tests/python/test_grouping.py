"""popdist.ReplicaGrouping: PopXL's rules (design.md §6), checked exhaustively against a direct model."""

import itertools

import pytest

import popdist


def model_groups(replication_factor, group_size, stride):
    """The groups by definition: group_size members `stride` apart."""
    if stride == 1:
        return [list(range(g * group_size, (g + 1) * group_size)) for g in range(replication_factor // group_size)]
    return [[start + k * stride for k in range(group_size)] for start in range(stride)]


def valid(replication_factor, group_size, stride):
    if stride == 1:
        return replication_factor % group_size == 0
    return stride * group_size == replication_factor


@pytest.mark.parametrize(("rf", "size", "stride"), [
    (rf, size, stride) for rf, size, stride in itertools.product([1, 2, 4, 6, 8, 16], [1, 2, 3, 4, 8], [1, 2, 3, 4, 8])
    if valid(rf, size, stride) and size <= rf])
def test_groups_match_the_definition(rf, size, stride):
    g = popdist.ReplicaGrouping(rf, size, stride)
    groups = model_groups(rf, size, stride)
    assert g.groups() == groups
    assert g.num_groups == len(groups)
    for index, members in enumerate(groups):
        assert g.members(index) == members
        assert all(g.group_of(r) == index for r in members)
    assert g.retrieved_replicas("one_per_group") == [m[0] for m in groups]
    assert g.retrieved_replicas("all_replicas") == list(range(rf))
    transposed = g.transpose().groups()
    assert transposed == [[members[i] for members in groups] for i in range(size)]


def test_design_examples():
    assert popdist.ReplicaGrouping(16, 4, 1).groups()[:2] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert popdist.ReplicaGrouping(16, 4, 4).groups()[:2] == [[0, 4, 8, 12], [1, 5, 9, 13]]
    assert popdist.ReplicaGrouping(4, 1).groups() == [[0], [1], [2], [3]]
    assert popdist.ReplicaGrouping(8).groups() == [list(range(8))]


@pytest.mark.parametrize(("args", "named"), [((16, 3), "group_size"), ((16, 4, 3), "stride"), ((0,), "replication_factor")])
def test_invalid_groupings_raise_usage_error_naming_the_argument(args, named):
    with pytest.raises(popdist.UsageError, match=named) as error:
        popdist.ReplicaGrouping(*args)
    assert isinstance(error.value, ValueError) and isinstance(error.value, popdist.PopDistError)


def test_bad_retrieval_mode_and_replica_are_usage_errors():
    g = popdist.ReplicaGrouping(8, 2)
    with pytest.raises(popdist.UsageError, match="mode"):
        g.retrieved_replicas("some")
    with pytest.raises(popdist.UsageError):
        g.group_of(8)
    with pytest.raises(popdist.UsageError):
        g.members(4)


def test_instances_hosting_ranges_and_topology():
    g = popdist.ReplicaGrouping(8, 4, 2)  # groups {0,2,4,6}, {1,3,5,7}
    ranges = [(0, 0, 2), (1, 2, 2), (2, 4, 2), (3, 6, 2)]
    assert g.instances_hosting(0, ranges) == [0, 1, 2, 3]
    contiguous = popdist.ReplicaGrouping(8, 2)  # {0,1} {2,3} {4,5} {6,7}
    assert contiguous.instances_hosting(1, ranges) == [1]
    assert contiguous.instances_hosting(1, [(0, 0, 3), (1, 3, 5)]) == [0, 1]
    topology = popdist.detect({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "4", "POPDIST_NUM_LOCAL_REPLICAS": "2"})
    assert contiguous.instances_hosting(3, topology) == [3]
    assert contiguous.instances_hosting(3, topology.to_dict()) == [3]


def test_value_semantics():
    a, b = popdist.ReplicaGrouping(8, 2, 4), popdist.ReplicaGrouping(8, 2, 4)
    assert a == b and hash(a) == hash(b) and a != popdist.ReplicaGrouping(8, 2)
    assert a.transpose().transpose() == a
    assert repr(a) == "ReplicaGrouping(replication_factor=8, group_size=2, stride=4)"
    assert (a.replication_factor, a.group_size, a.stride) == (8, 2, 4)
    assert a != "not a grouping"


# PopXL's constructor forms. PopXL's ir.replica_grouping(stride=1, group_size=None): group_size
# defaults to replication_factor // stride; its documented examples for 8 replicas give these
# assignments (the group of each replica).
POPXL_EXAMPLES = [((1, 2), [0, 0, 1, 1, 2, 2, 3, 3]), ((1, 4), [0, 0, 0, 0, 1, 1, 1, 1]),
                  ((2, 4), [0, 1, 0, 1, 0, 1, 0, 1]), ((4, 2), [0, 1, 2, 3, 0, 1, 2, 3])]


@pytest.mark.parametrize(("stride_and_size", "assignment"), POPXL_EXAMPLES)
def test_popxl_documented_assignments(stride_and_size, assignment):
    stride, group_size = stride_and_size
    assert popdist.replica_grouping(stride, group_size, replication_factor=8).assignment == assignment
    assert popdist.replica_grouping(stride=stride, group_size=group_size, replication_factor=8).assignment == assignment
    assert popdist.ReplicaGrouping(8, group_size, stride).assignment == assignment
    assert popdist.ReplicaGrouping(8, stride=stride, group_size=group_size).assignment == assignment


@pytest.mark.parametrize(("make", "expected"), [
    # the example: a stride alone is four groups of four, not one group of 16
    (lambda: popdist.ReplicaGrouping(16, stride=4), (4, 4, [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]])),
    (lambda: popdist.ReplicaGrouping(16), (16, 1, [list(range(16))])),
    (lambda: popdist.ReplicaGrouping(16, 4), (4, 1, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]])),
    (lambda: popdist.ReplicaGrouping(replication_factor=8, stride=8), (1, 1, [[i] for i in range(8)])),
    (lambda: popdist.ReplicaGrouping(8, group_size=None, stride=2), (4, 2, [[0, 2, 4, 6], [1, 3, 5, 7]])),
    (lambda: popdist.replica_grouping(4, replication_factor=16), (4, 4, [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]])),
    (lambda: popdist.replica_grouping(replication_factor=4), (4, 1, [[0, 1, 2, 3]])),
])
def test_popxl_defaults(make, expected):
    g = make()
    assert (g.group_size, g.stride, g.groups()) == expected


def test_replica_grouping_defaults_to_the_jobs_replicas(request):
    from helpers import use_topology

    use_topology(request, popdist.detect({"POPDIST_NUM_TOTAL_REPLICAS": "8", "POPDIST_NUM_LOCAL_REPLICAS": "8"}))
    assert popdist.replica_grouping(2) == popdist.ReplicaGrouping(8, 4, 2)
    assert popdist.replica_grouping() == popdist.ReplicaGrouping(8)


def test_a_stride_that_does_not_divide_names_the_default_rule():
    with pytest.raises(popdist.UsageError, match=r"stride=3\): group_size defaults to replication_factor / stride, "
                                                 r"so stride must divide replication_factor \(16 % 3 = 1\)"):
        popdist.ReplicaGrouping(16, stride=3)
    with pytest.raises(popdist.UsageError, match=r"2 x 4 = 8, not 16"):
        popdist.replica_grouping(2, 4, replication_factor=16)


def test_groups_of_one_replica_compare_equal_whatever_the_stride():
    strided = popdist.ReplicaGrouping(8, 1, 8)
    assert strided == popdist.ReplicaGrouping(8, 1) and hash(strided) == hash(popdist.ReplicaGrouping(8, 1))
    assert strided.stride == 1
