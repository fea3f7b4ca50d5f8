// popdist._core: the package's core module. It adds the registry's calls with their one-instance
// behaviour without MPI (entry_points.hpp) and the mechanics of the process's life (lifecycle.hpp;
// popdist/_lifecycle.py owns it) to the pure core's calls (detection, device ids, replica
// grouping), which it reaches, as popdist._mpi does, in the one shared core
// (libpopdist_python_core.so; bindings/CMakeLists.txt says why). No MPI: _mpi is imported on the
// first call that needs it (mpi_backend.hpp).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "errors.hpp"
#include "popdist/arguments.hpp"
#include "popdist/environment.hpp"
#include "popdist/error.hpp"
#include "popdist/grouping.hpp"
#include "popdist/topology.hpp"
#include "popdist/topology_fields.hpp"
#include "popdist/version.hpp"
#include "python_arguments.hpp"
#include "current_topology.hpp"
#include "entry_points.hpp"
#include "lifecycle.hpp"
#include "topology_dict.hpp"

namespace py = pybind11;
using popdist::python::topology_from_object;
using popdist::python::topology_to_dict;

namespace {

// A count or index argument of a PopDist call: an integer in low..INT_MAX, else UsageError naming
// the call and the argument (pybind11's own conversion would list C++ signatures instead). The
// core checks the finer rules (ReplicaGrouping's divisibility, a replica's range) in its words.
int count(const py::handle& value, const char* call, const char* argument,
          int low = std::numeric_limits<int>::min()) {
  return popdist::python::integer_argument(value, call, argument, low, std::numeric_limits<int>::max());
}

// The lists a ReplicaGrouping hands out have one entry per replica: beyond this many (2**24, far
// past any job) building one would take gigabytes, so it is refused with the way around it.
constexpr int kMaxListedReplicas = 1 << 24;

void check_list_size(int entries, const char* call) {
  if (entries > kMaxListedReplicas) {
    throw popdist::UsageError(std::string(call) + ": a list of " + std::to_string(entries) +
                              " replicas is too large to build (at most " + std::to_string(kMaxListedReplicas) +
                              "); ask group_of(replica) for one replica instead");
  }
}

popdist::RetrievalMode parse_retrieval_mode(const std::string& mode) {
  if (mode == "one_per_group") return popdist::RetrievalMode::OnePerGroup;
  if (mode == "all_replicas") return popdist::RetrievalMode::AllReplicas;
  throw popdist::UsageError("retrieved_replicas: mode must be 'one_per_group' or 'all_replicas', not '" + mode + "'");
}

// instances_hosting(group, where): `where` is a list of (instance, offset, count) ranges, a
// topology (popdist.Topology or its dict), or None for the process's current topology.
std::vector<int> instances_hosting(const popdist::ReplicaGrouping& grouping, int group, const py::object& where) {
  if (where.is_none()) {
    return grouping.instances_hosting(group, topology_from_object(popdist::python::current_topology()));
  }
  if (py::isinstance<py::list>(where) || py::isinstance<py::tuple>(where)) {
    std::vector<popdist::ReplicaRange> ranges;
    for (const auto& item : where) {
      auto [instance, offset, count] = item.cast<std::tuple<int, int, int>>();
      ranges.push_back(popdist::ReplicaRange{instance, offset, count});
    }
    return grouping.instances_hosting(group, ranges);
  }
  return grouping.instances_hosting(group, topology_from_object(where));
}

// A FieldKind as Python sees it in TOPOLOGY_FIELD_ROWS.
const char* field_kind_name(popdist::FieldKind kind) {
  switch (kind) {
    case popdist::FieldKind::Integer: return "integer";
    case popdist::FieldKind::OptionalInteger: return "optional_integer";
    case popdist::FieldKind::Flag: return "flag";
    case popdist::FieldKind::LauncherName: return "launcher";
  }
  return "unknown";
}

// The current topology, the field table and detection from a given environment.
void add_topology_calls(py::module_& m) {
  m.def("topology", &popdist::python::current_topology,
        "This process's current topology (a popdist.Topology): detected from the environment, refined by init().");
  m.def("replace_topology", &popdist::python::replace_topology, py::arg("topology"),
        "For tests: makes `topology` (a popdist.Topology, or None to detect again) current; returns the previous one.");
  // The core's field table (popdist/topology_fields.hpp): the names, in order, that to_dict()
  // and the CLI's JSON share; and its rows as (name, kind, PopDist's getter or "", its docstring
  // or ""), from which the Python package defines PopDist's getters, as context.hpp does in C++.
  py::tuple field_names(popdist::topology_fields.size());
  py::tuple field_rows(popdist::topology_fields.size());
  for (std::size_t i = 0; i < popdist::topology_fields.size(); ++i) {
    const auto& row = popdist::topology_fields[i];
    field_names[i] = py::str(row.name.data(), row.name.size());
    field_rows[i] = py::make_tuple(std::string(row.name), field_kind_name(row.kind), std::string(row.popdist_getter),
                                   std::string(row.popdist_getter_doc));
  }
  m.attr("TOPOLOGY_FIELDS") = field_names;
  m.attr("TOPOLOGY_FIELD_ROWS") = field_rows;
  m.def(
      "process_topology", [] { return topology_to_dict(popdist::detect(popdist::process_environment())); },
      "Detects this process's topology from the live environment (no MPI); returns its fields as a dict.");
  m.def(
      "detect",
      [](const std::map<std::string, std::string>& env) {
        return topology_to_dict(popdist::detect(popdist::lookup_in(popdist::EnvMap(env.begin(), env.end()))));
      },
      py::arg("env"), "Detects the topology a process with exactly the variables `env` would see.");
  m.def(
      "read_env_file",
      [](const std::string& path) {
        auto vars = popdist::read_env_file(path);
        return std::map<std::string, std::string>(vars.begin(), vars.end());
      },
      py::arg("path"), "Reads a saved NAME=VALUE environment file.");
  m.def(
      "describe", [](const py::object& topology) { return popdist::describe(topology_from_object(topology)); },
      py::arg("topology"), "A multi-line human-readable description of a topology.");
}

// The argument rules of popdist/arguments.hpp, for the Python layer's own checks (popdist.torch's
// timeouts) and the tests: the same conversion and checks as the registry's calls.
void add_argument_rules(py::module_& m) {
  m.def(
      "checked_instances",
      [](const py::handle& values, int num_instances, const std::string& caller, const std::string& argument,
         bool allow_empty) {
        return popdist::python::checked_instance_list(values, num_instances, caller.c_str(), argument.c_str(),
                                                      allow_empty);
      },
      py::arg("values"), py::arg("num_instances"), py::arg("caller"), py::arg("argument"),
      py::arg("allow_empty") = false);
  m.def(
      "parsed_timeout_variable",
      [](const std::optional<std::string>& text) {
        return popdist::parsed_timeout_variable(text ? std::optional<std::string_view>(*text) : std::nullopt);
      },
      py::arg("text"), "POPDIST_SYNC_TIMEOUT's text under the timeout rule: seconds, or None for no default.");
  m.def("shown_text", &popdist::shown_text, py::arg("text"),
        "A value for an error message: at most 64 characters, then '... (N bytes)'.");
  m.def(
      "checked_timeout",
      [](const py::handle& timeout, const std::string& caller) {
        return popdist::python::timeout_seconds(timeout, caller.c_str());
      },
      py::arg("timeout"), py::arg("caller"));
  m.def(
      "checked_integer",
      [](const py::handle& value, const std::string& caller, const std::string& argument, int low) {
        return count(value, caller.c_str(), argument.c_str(), low);
      },
      py::arg("value"), py::arg("caller"), py::arg("argument"), py::arg("low"),
      "The one integer rule of popdist's calls: an int (not a bool) in low..INT_MAX, else UsageError.");
}

// PopDist's device calls over a given topology.
void add_device_calls(py::module_& m) {
  m.def(
      "device_id",
      [](const py::object& topology, const py::handle& ipus_per_replica) {
        return popdist::device_id(topology_from_object(topology),
                                  count(ipus_per_replica, "getDeviceId", "ipusPerReplica", 0));
      },
      py::arg("topology"), py::arg("ipus_per_replica") = 0);
  m.def(
      "check_ipus_per_replica",
      [](const py::object& topology, const py::handle& expected) {
        return popdist::check_ipus_per_replica(topology_from_object(topology),
                                               count(expected, "checkNumIpusPerReplica", "numIpusPerReplica"));
      },
      py::arg("topology"), py::arg("expected"));
  m.def(
      "local_device_ordinals",
      [](const py::object& topology) { return popdist::local_device_ordinals(topology_from_object(topology)); },
      py::arg("topology"));
}

// PopXL's defaults: group_size left out is replication_factor // stride.
popdist::ReplicaGrouping new_grouping(const py::handle& replication_factor, const py::handle& group_size,
                                      const py::handle& stride) {
  const char* call = "ReplicaGrouping";
  std::optional<int> size;
  if (!group_size.is_none()) size = count(group_size, call, "group_size");
  return popdist::ReplicaGrouping::with_stride(count(replication_factor, call, "replication_factor"),
                                               count(stride, call, "stride"), size);
}

// The ReplicaGrouping methods that hand out lists, each refused beyond kMaxListedReplicas.
void add_grouping_lists(py::class_<popdist::ReplicaGrouping>& grouping) {
  using popdist::ReplicaGrouping;
  grouping
      .def_property_readonly(
          "assignment",
          [](const ReplicaGrouping& g) {
            check_list_size(g.replication_factor(), "ReplicaGrouping.assignment");
            return g.assignment();
          },
          "Every replica's group, replica by replica (PopXL's ReplicaGrouping.assignment).")
      .def(
          "members",
          [](const ReplicaGrouping& g, const py::handle& group) {
            const int index = count(group, "ReplicaGrouping.members", "group");
            check_list_size(g.group_size(), "ReplicaGrouping.members");
            return g.members(index);
          },
          py::arg("group"))
      .def("groups",
           [](const ReplicaGrouping& g) {
             check_list_size(g.replication_factor(), "ReplicaGrouping.groups");
             return g.groups();
           })
      .def(
          "retrieved_replicas",
          [](const ReplicaGrouping& g, const std::string& mode) {
            const auto parsed = parse_retrieval_mode(mode);
            check_list_size(parsed == popdist::RetrievalMode::AllReplicas ? g.replication_factor() : g.num_groups(),
                            "ReplicaGrouping.retrieved_replicas");
            return g.retrieved_replicas(parsed);
          },
          py::arg("mode") = "one_per_group");
}

// PopXL's ReplicaGrouping: its properties, the calls that return one value, and Python's protocols.
void add_replica_grouping(py::module_& m) {
  using popdist::ReplicaGrouping;
  py::class_<ReplicaGrouping> grouping(m, "ReplicaGrouping",
                                       "Replicas 0..replication_factor-1 split into groups of group_size members "
                                       "stride apart (PopXL's rules).");
  grouping.def(py::init(&new_grouping), py::arg("replication_factor"), py::arg("group_size") = py::none(),
               py::arg("stride") = 1)
      .def_property_readonly("replication_factor", &ReplicaGrouping::replication_factor)
      .def_property_readonly("group_size", &ReplicaGrouping::group_size)
      .def_property_readonly("stride", &ReplicaGrouping::stride)
      .def_property_readonly("num_groups", &ReplicaGrouping::num_groups)
      .def(
          "group_of",
          [](const ReplicaGrouping& g, const py::handle& replica) {
            return g.group_of(count(replica, "ReplicaGrouping.group_of", "replica"));
          },
          py::arg("replica"))
      .def("transpose", &ReplicaGrouping::transpose)
      .def("instances_hosting", &instances_hosting, py::arg("group"), py::arg("topology") = py::none())
      .def("__eq__",
           [](const ReplicaGrouping& a, const py::object& b) -> py::object {
             if (!py::isinstance<ReplicaGrouping>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             return py::bool_(a == b.cast<const ReplicaGrouping&>());
           })
      .def("__hash__",
           [](const ReplicaGrouping& g) {
             return py::hash(py::make_tuple(g.replication_factor(), g.group_size(), g.stride()));
           })
      .def("__repr__", [](const ReplicaGrouping& g) {
        return "ReplicaGrouping(replication_factor=" + std::to_string(g.replication_factor()) +
               ", group_size=" + std::to_string(g.group_size()) + ", stride=" + std::to_string(g.stride()) + ")";
      });
  add_grouping_lists(grouping);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "popdist's no-MPI layer: topology detection, device ids and replica grouping.";
  popdist::python::register_exception_translator();
  m.attr("__version__") = popdist::version();
  popdist::python::add_entry_points(m);  // synchronize, execute_on_instances, register_communicator
  popdist::python::add_lifecycle(m);     // start_backend, finalize, is_initialized, backend
  add_topology_calls(m);
  add_argument_rules(m);
  add_device_calls(m);
  add_replica_grouping(m);
}
