"""popdist.popart / popdist.poptorch / popdist.tensorflow.

The real frameworks (Graphcore's Poplar SDK) cannot be installed here, so: without them, importing
each submodule raises ImportError naming the package; with a small fake framework module injected
into sys.modules, the helpers configure it from the current topology exactly as PopDist did.
"""

import copy
import importlib
import re
import sys
import types

import pytest

import popdist
from helpers import launcher_variables, run_json, use_topology

# Instance 2 of 4, 2 replicas each (offset 4 of 8), 2 IPUs per replica on 16 IPUs.
TOPOLOGY = {"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4", "POPDIST_NUM_LOCAL_REPLICAS": "2",
            "POPDIST_NUM_IPUS_PER_REPLICA": "2"}


@pytest.fixture
def launched(request):
    """Makes the current topology that of TOPOLOGY (as init() would), without touching os.environ."""
    use_topology(request, popdist.detect(TOPOLOGY))


def fresh_import(monkeypatch, name):
    monkeypatch.delitem(sys.modules, f"popdist.{name}", raising=False)
    return importlib.import_module(f"popdist.{name}")


@pytest.mark.parametrize(("submodule", "package"), [("popart", "popart"), ("poptorch", "poptorch"),
                                                    ("tensorflow", "tensorflow")])
def test_missing_framework_raises_import_error_naming_it(monkeypatch, submodule, package):
    monkeypatch.setitem(sys.modules, package, None)  # makes `import <package>` fail even if installed
    with pytest.raises(ImportError, match=f"popdist.{submodule} needs .*'{package}'") as error:
        fresh_import(monkeypatch, submodule)
    assert error.value.name == package


def test_popart_configures_session_options_and_device(monkeypatch, launched):
    acquired = []

    class DeviceManager:
        def acquireDeviceById(self, device_id, connectionType=None):  # noqa: N802,N803 - PopART's names
            acquired.append((device_id, connectionType))
            return f"device {device_id}"

    fake = types.ModuleType("popart")
    fake.DeviceManager = DeviceManager
    fake.DeviceConnectionType = types.SimpleNamespace(Always="Always", OnDemand="OnDemand")
    monkeypatch.setitem(sys.modules, "popart", fake)
    helpers = fresh_import(monkeypatch, "popart")

    opts = types.SimpleNamespace()
    assert helpers.configureSessionOptions(opts) is opts
    assert opts.enableDistributedReplicatedGraphs is True and opts.enableReplicatedGraphs is True
    assert (opts.replicatedGraphCount, opts.globalReplicationFactor, opts.globalReplicaOffset) == (2, 8, 4)

    assert helpers.getDevice() == "device 26"  # 4 x 2 x 2 on 16 IPUs: instance 2 -> 26
    assert helpers.getDevice(1, connectionType="OnDemand") == f"device {popdist.getDeviceId(1)}"
    assert acquired == [(26, "Always"), (popdist.getDeviceId(1), "OnDemand")]


def test_popart_get_device_failure_is_a_popdist_error(monkeypatch, launched):
    fake = types.ModuleType("popart")
    fake.DeviceManager = lambda: types.SimpleNamespace(acquireDeviceById=lambda *a, **k: None)
    fake.DeviceConnectionType = types.SimpleNamespace(Always="Always")
    monkeypatch.setitem(sys.modules, "popart", fake)
    with pytest.raises(popdist.PopDistError, match="could not acquire device 26"):
        fresh_import(monkeypatch, "popart").getDevice()


def fake_poptorch():
    """A stand-in shaped like poptorch.Options: Distributed is a property returning
    self._distributed (a _DistributedOptions with processId/numProcesses), and the popart
    options live in self._Popart."""

    class PopartOptions:
        def __init__(self):
            self.values = {}

        def set(self, key, value):
            self.values[key] = value

    class _DistributedOptions:
        def __init__(self):
            self.process = (0, 1)
            self.disabled = False

        def configureProcessId(self, process_id, process_count):  # noqa: N802 - PopTorch's name
            self.process = (process_id, process_count)
            return self

        def disable(self):
            self.disabled = True
            return self

        def setEnvVarNames(self, var_num_processes, var_process_id):  # noqa: N802
            return self

        @property
        def processId(self):  # noqa: N802
            return self.process[0]

        @property
        def numProcesses(self):  # noqa: N802
            return self.process[1]

    class Options:
        def __init__(self, **kwargs):
            self.kwargs = kwargs
            self._distributed = _DistributedOptions()
            self._Popart = PopartOptions()
            self.replication_factor = 1
            self.ipu_id = None

        @property
        def Distributed(self):  # noqa: N802
            return self._distributed

        def replicationFactor(self, n):  # noqa: N802
            self.replication_factor = n
            return self

        def useIpuId(self, device_id):  # noqa: N802
            self.ipu_id = device_id
            return self

        def deviceIterations(self, n):  # noqa: N802
            self.device_iterations = n
            return self

    fake = types.ModuleType("poptorch")
    fake.Options = Options
    return fake


def test_poptorch_options(monkeypatch, launched):
    fake = fake_poptorch()
    monkeypatch.setitem(sys.modules, "poptorch", fake)
    helpers = fresh_import(monkeypatch, "poptorch")

    opts = helpers.Options(deviceIterations=4)
    assert isinstance(opts, fake.Options) and opts.kwargs == {"deviceIterations": 4}
    assert opts.replication_factor == 2
    assert opts.Distributed.process == (2, 4)
    assert opts._Popart.values == {"globalReplicaOffset": 4, "globalReplicationFactor": 8}
    assert opts.ipu_id == 26
    assert helpers.Options(ipus_per_replica=1).ipu_id == popdist.getDeviceId(1)
    # What PopRun does not decide stays PopTorch's.
    assert opts.deviceIterations(8) is opts and opts.device_iterations == 8


@pytest.mark.parametrize(("call", "name"), [
    (lambda opts: opts.useIpuId(1), "useIpuId"),
    (lambda opts: opts.replicationFactor(1), "replicationFactor"),
    (lambda opts: opts.Distributed.disable(), "Distributed.disable"),
    (lambda opts: opts.Distributed.setEnvVarNames("A", "B"), "Distributed.setEnvVarNames"),
    (lambda opts: opts.Distributed.configureProcessId(1), "Distributed.configureProcessId"),
])
def test_poptorch_options_refuse_what_the_launcher_decided(monkeypatch, launched, call, name):
    # PopTorch's own test of popdist.poptorch.Options (tests/distributed): RuntimeError with this text.
    monkeypatch.setitem(sys.modules, "poptorch", fake_poptorch())
    opts = fresh_import(monkeypatch, "poptorch").Options(ipus_per_replica=2)
    with pytest.raises(RuntimeError, match=rf"Cannot call `{re.escape(name)}` with popdist\.poptorch\.Options"):
        call(opts)
    # ... and nothing changed.
    assert (opts.replication_factor, opts.ipu_id, opts.Distributed.process) == (2, 26, (2, 4))
    assert opts.Distributed.disabled is False


def test_poptorch_options_getters(monkeypatch, launched):
    monkeypatch.setitem(sys.modules, "poptorch", fake_poptorch())
    opts = fresh_import(monkeypatch, "poptorch").Options(ipus_per_replica=2)
    assert (opts.Distributed.processId, opts.Distributed.numProcesses) == (2, 4)
    copied = copy.deepcopy(opts)  # PopTorch copies options (toDict, clones): the wrapper survives it
    assert copied.Distributed.processId == 2
    with pytest.raises(RuntimeError, match="Cannot call `Distributed.disable`"):
        copied.Distributed.disable()


def test_poptorch_options_unlaunched_match_poptorchs_getters_test(monkeypatch, request):
    # PopTorch's test_getters runs without PopRun: one process of one.
    use_topology(request, popdist.detect({}))
    monkeypatch.setitem(sys.modules, "poptorch", fake_poptorch())
    opts = fresh_import(monkeypatch, "poptorch").Options(ipus_per_replica=2)
    assert (opts.Distributed.processId, opts.Distributed.numProcesses) == (0, 1)
    assert opts.replication_factor == 1


POPART_AUTO_INIT = """
import json, sys, types, popdist
# PopART's own helper (popart/_popdist.py, shape kept): on a multi-instance Session it calls
# popdist.init() unless popdist.isBackendInitialized(), with a deprecation warning.
warnings = []
def popart_init(print_deprecation):
    if not popdist.isBackendInitialized():
        if print_deprecation:
            warnings.append("Deprecation warning: ... call `popdist.init()`")
        popdist.init()
if {user_init}:
    popdist.init()
before = popdist.isBackendInitialized()
popart_init(True)
popart_init(True)  # a second Session: nothing more
print(json.dumps({{"before": before, "after": popdist.isBackendInitialized(), "warnings": len(warnings)}}))
"""


@pytest.mark.parametrize("user_init", [False, True])
def test_popart_auto_init_pattern(monkeypatch, user_init):
    for name in launcher_variables():
        monkeypatch.delenv(name)
    got = run_json(POPART_AUTO_INIT.format(user_init=user_init), timeout=120)
    assert got == {"before": user_init, "after": True, "warnings": 0 if user_init else 1}


def test_tensorflow_set_ipu_config(monkeypatch, launched):
    monkeypatch.setitem(sys.modules, "tensorflow", types.ModuleType("tensorflow"))
    helpers = fresh_import(monkeypatch, "tensorflow")

    def new_config():
        distribution = types.SimpleNamespace(process_count=0, process_index=0)
        return types.SimpleNamespace(experimental=types.SimpleNamespace(multi_replica_distribution=distribution),
                                     select_ipus=[])

    config = new_config()
    assert helpers.set_ipu_config(config) is config
    distribution = config.experimental.multi_replica_distribution
    assert (distribution.process_count, distribution.process_index, config.select_ipus) == (4, 2, 26)

    config = new_config()
    helpers.set_ipu_config(config, ipus_per_replica=1, configure_device=False)
    assert config.select_ipus == [] and config.experimental.multi_replica_distribution.process_index == 2
    helpers.set_ipu_config(config, ipus_per_replica=4)
    assert config.select_ipus == popdist.getDeviceId(4)
    # The keyword form of Graphcore's examples, and the return value TF1-style scripts reassign.
    config = new_config()
    assert helpers.set_ipu_config(config=config, ipus_per_replica=2, configure_device=True) is config
    assert config.select_ipus == 26
