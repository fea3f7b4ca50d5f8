"""popdist.launch from a program: return values in instance order, the topology the function
sees, one LaunchError for a failed job, unpicklable functions, --max-restarts, the options."""

import re
import subprocess
import sys

import launch_functions as functions
import pytest

import popdist
from popdist import _launch, _launch_payload
from popdist.errors import LaunchError, UsageError


@pytest.mark.parametrize("instances", [1, 2, 3])
def test_return_values_come_in_instance_order(instances, capsys):
    values = popdist.launch(functions.whoami, "x", num_instances=instances, num_replicas=2 * instances)
    assert [value["instance"] for value in values] == list(range(instances))
    for index, value in enumerate(values):
        assert value["tag"] == "x" and value["instances"] == instances and value["rank"] == str(index)
        assert (value["replicas"], value["offset"], value["total"]) == (2, 2 * index, 2 * instances)
    output = capsys.readouterr().out
    for index in range(instances):  # live, and tagged as under popdist run when there are several
        tagged = rf"\[\d+,{index}\]<stdout>: ?hello from {index}" if instances > 1 else f"hello from {index}"
        assert re.search(tagged, output), output


def test_a_failing_instance_raises_one_error_with_the_report():
    with pytest.raises(LaunchError) as caught:
        popdist.launch(functions.fail_on, 1, num_instances=2)
    error = caught.value
    first = error.failures[0]
    assert first.instance == 1 and first.status == 1 and first.status_text == "exit code 1"
    assert first.exception_type == "ValueError" and first.message == "boom on 1"
    assert isinstance(first.exception, ValueError)
    assert "Traceback (most recent call last)" in first.traceback and "fail_on" in first.traceback
    text = str(error)
    assert "first failure: instance 1 on " in text and "ValueError: boom on 1" in text
    assert error.status != 0 and (error.attempt, error.attempts) == (0, 1)


def test_max_restarts_runs_the_job_again():
    assert popdist.launch(functions.fail_first_attempt, 0, num_instances=2, max_restarts=1) == [1, 1]


def test_a_lambda_without_cloudpickle_names_itself_and_the_way_out(monkeypatch):
    monkeypatch.setattr(_launch_payload, "_cloudpickle", None)
    with pytest.raises(UsageError, match="cloudpickle") as caught:
        popdist.launch(lambda: 1, num_instances=2)
    assert "<lambda>" in str(caught.value) and "top level of a module" in str(caught.value)

    def local():
        return 1

    with pytest.raises(UsageError, match=r"local\b.*pip install cloudpickle"):
        popdist.launch(local, num_instances=2)


def test_a_notebook_function_without_cloudpickle_is_refused_before_the_start(monkeypatch):
    monkeypatch.setattr(_launch_payload, "_cloudpickle", None)
    monkeypatch.setattr(_launch_payload, "_main_file", lambda: None)  # __main__ of a kernel has no file
    namespace = {"__name__": "__main__"}
    exec("def train():\n    return 1\n", namespace)
    with pytest.raises(UsageError, match=r"__main__\.train.*defined in __main__.*cloudpickle"):
        popdist.launch(namespace["train"], num_instances=2)


def test_cloudpickle_sends_lambdas_and_closures():
    pytest.importorskip("cloudpickle", reason="cloudpickle is not installed")
    offset = 10
    assert popdist.launch(lambda a: a + offset + popdist.getInstanceIndex(), 1, num_instances=2) == [11, 12]


def test_options_map_to_popdist_runs_long_options():
    words = _launch.run_arguments(2, {"hosts": ["a", "b"], "max_restarts": 2, "tee": True,
                                      "stall_keep_running": False, "mpi_global_args": "--mca x y",
                                      "log_dir": "/logs", "grace_period": None})
    assert words == ["--num-instances", "2", "--host", "a", "--host", "b", "--max-restarts", "2", "--tee",
                     "--mpi-global-args", "--mca x y", "--log-dir", "/logs"]
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_restart'"):
        popdist.launch(functions.whoami, "x", max_restart=1)
    with pytest.raises(UsageError, match="num_instances"):
        popdist.launch(functions.whoami, "x", num_instances=0)


def test_a_refused_option_is_a_usage_error_with_popdist_runs_words():
    with pytest.raises(UsageError, match="grace-period"):
        popdist.launch(functions.whoami, "x", num_instances=1, grace_period=-1)


def test_an_instance_that_cannot_see_the_directory_says_so(tmp_path):
    # As on a host that does not share the caller's $TMPDIR: the message names the way out.
    missing = tmp_path / "not-here"
    result = subprocess.run([sys.executable, "-m", "popdist._launch_instance", str(missing)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1
    assert f"the job's directory {missing} is not on this host" in result.stderr and "shared_dir=" in result.stderr
