"""Module-level functions that the popdist.launch tests send to their instances (by name: the
instances import this module through the caller's sys.path)."""

import os
import pathlib
import time

import popdist


def whoami(tag):
    print(f"hello from {popdist.getInstanceIndex()}", flush=True)
    return {
        "tag": tag,
        "instance": popdist.getInstanceIndex(),
        "instances": popdist.getNumInstances(),
        "replicas": popdist.getNumLocalReplicas(),
        "offset": popdist.getReplicaIndexOffset(),
        "total": popdist.getNumTotalReplicas(),
        "rank": os.environ.get("RANK"),
    }


def fail_on(instance):
    if popdist.getInstanceIndex() == instance:
        raise ValueError(f"boom on {instance}")
    time.sleep(0.5)  # the others are still running when the failure ends the job
    return "survived"


def fail_first_attempt(instance):
    attempt = int(os.environ["POPDIST_RESTART_COUNT"])
    if attempt == 0 and popdist.getInstanceIndex() == instance:
        raise RuntimeError("first attempt fails")
    return attempt


def sleep_after_mark(directory):
    pathlib.Path(directory, f"started.{popdist.getInstanceIndex()}").touch()
    time.sleep(300)
