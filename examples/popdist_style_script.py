#!/usr/bin/env python3
"""A script written exactly as for Graphcore's PopDist (PopRun), unchanged.

    python3 examples/popdist_style_script.py          (one instance, no MPI)
    mpirun -np 4 python examples/popdist_style_script.py
    popdist run --num-instances 4 --num-replicas 8 python examples/popdist_style_script.py

Under plain mpirun, Graphcore's PopDist saw no POPDIST_* variables, so isPopdistEnvSet() was
False and this ran as 4 unrelated single-instance copies; popdist also counts a launcher as a
distributed environment, so it runs as 4 instances of one job.
"""

import argparse
import json
import os
import tempfile

import popdist


def prepare_dataset(directory):
    # Runs on instance 0 only: e.g. download and unpack once for the whole job.
    path = os.path.join(directory, "dataset.json")
    with open(path, "w") as f:
        json.dump({"samples": list(range(100))}, f)
    return path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "popdist-style-example"))
    directory = parser.parse_args().data_dir
    # The usual PopDist pattern: init() only when launched, every other call unconditional. Run
    # plainly (`python3 examples/popdist_style_script.py`) this is a job of one instance, and
    # execute_on_instances / synchronize act as in that job, without MPI.
    if popdist.isPopdistEnvSet():
        popdist.init()
    instance = popdist.getInstanceIndex()
    instances = popdist.getNumInstances()
    replicas = popdist.getNumLocalReplicas()
    total_replicas = popdist.getNumTotalReplicas()
    offset = popdist.getReplicaIndexOffset()
    device_id = popdist.getDeviceId()
    assert popdist.checkNumIpusPerReplica(popdist.getNumIpusPerReplica())

    print(f"instance {instance}/{instances} (local {popdist.getLocalInstanceIndex()}): replicas "
          f"[{offset}, {offset + replicas}) of {total_replicas}, device id {device_id}, "
          f"uniform={popdist.isUniformReplicasPerInstance()}", flush=True)

    os.makedirs(directory, exist_ok=True)
    path = popdist.execute_on_instances({0}, prepare_dataset, directory)
    popdist.synchronize()  # everyone waits until instance 0 has prepared the data
    path = path or os.path.join(directory, "dataset.json")
    with open(path) as f:
        samples = json.load(f)["samples"]
    mine = samples[instance::instances]
    print(f"instance {instance}: {len(mine)} samples, first {mine[0]}", flush=True)
    popdist.synchronize()
    if instance == 0:
        print(f"done: {instances} instance(s)", flush=True)


if __name__ == "__main__":
    main()
