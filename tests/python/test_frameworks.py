"""popdist.popart / popdist.poptorch / popdist.tensorflow.

The real frameworks (Graphcore's Poplar SDK) cannot be installed here, so: without them, importing
each submodule raises ImportError naming the package; with a small fake framework module injected
into sys.modules, the helpers configure it from the current topology exactly as PopDist did.
"""

import importlib
import sys
import types

import pytest

import popdist
from popdist import _api

# Instance 2 of 4, 2 replicas each (offset 4 of 8), 2 IPUs per replica on 16 IPUs.
TOPOLOGY = {"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4", "POPDIST_NUM_LOCAL_REPLICAS": "2",
            "POPDIST_NUM_IPUS_PER_REPLICA": "2"}


@pytest.fixture
def launched(monkeypatch):
    """Makes the current topology that of TOPOLOGY (as init() would), without touching os.environ."""
    monkeypatch.setattr(_api, "_current", popdist.detect(TOPOLOGY))


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


def test_poptorch_options(monkeypatch, launched):
    class PopartOptions:
        def __init__(self):
            self.values = {}

        def set(self, key, value):
            self.values[key] = value

    class Distributed:
        def configureProcessId(self, process_id, process_count):  # noqa: N802 - PopTorch's name
            self.process = (process_id, process_count)

    class Options:
        def __init__(self, **kwargs):
            self.kwargs = kwargs
            self.Distributed = Distributed()
            self._Popart = PopartOptions()

        def replicationFactor(self, n):  # noqa: N802
            self.replication_factor = n

        def useIpuId(self, device_id):  # noqa: N802
            self.ipu_id = device_id

    fake = types.ModuleType("poptorch")
    fake.Options = Options
    monkeypatch.setitem(sys.modules, "poptorch", fake)
    helpers = fresh_import(monkeypatch, "poptorch")

    opts = helpers.Options(deviceIterations=4)
    assert isinstance(opts, Options) and opts.kwargs == {"deviceIterations": 4}
    assert opts.replication_factor == 2
    assert opts.Distributed.process == (2, 4)
    assert opts._Popart.values == {"globalReplicaOffset": 4, "globalReplicationFactor": 8}
    assert opts.ipu_id == 26
    assert helpers.Options(ipus_per_replica=1).ipu_id == popdist.getDeviceId(1)


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
