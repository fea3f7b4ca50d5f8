"""PopRun command lines of the shapes found in Graphcore's public repositories (examples,
tutorials, popxl-addons, optimum-graphcore: BERT, ResNet, RNN-T, ViT, GPT training scripts),
written as those scripts finally run them (after `eval`), scaled down to this machine, and run
verbatim: `poprun` is a wrapper that execs `popdist run`, the hosts are the testbed's fake hosts,
and the program is topology_printer.py in place of the training script. The variables are the
scripts' own ($HOSTS, $VIPU_SERVER_HOST, $PARTITION, $NETMASK, $CACHE, ...), set by the check.

Each entry: (the line, the expected job: instances, replicas, IPUs per replica, hosts (None:
this machine), executable cache, ipuLinkDomainSize, the ignored options the warning names)."""

PRINTER = 'python3 "$PRINTER"'

CORPUS = [
    # ResNet-50 on a POD16 (one host, partition and server given, numa-aware)
    (f"""poprun -vv --num-instances 2 --num-replicas 4 --ipus-per-replica 1 --numa-aware 1 \\
        --vipu-server-host "$VIPU_SERVER_HOST" --vipu-partition=$PARTITION --update-partition=no \\
        --reset-partition=no --vipu-server-timeout 300 \\
        --mpi-global-args="--tag-output --allow-run-as-root" \\
        --mpi-local-args="-x LD_LIBRARY_PATH -x PATH -x PYTHONPATH -x POPLAR_ENGINE_OPTIONS" \\
        {PRINTER} --config resnet50_mlperf_pod16""",
     dict(instances=2, replicas=4, ipus=1, hosts=None,
          ignored=["--vipu-server-host", "--vipu-partition", "--update-partition", "--reset-partition",
                   "--vipu-server-timeout"])),
    # BERT on a POD128: two hosts, two ILDs, partition, cluster, server, quoted MPI arguments
    (f"""poprun -vv --num-instances 2 --num-replicas 4 --num-ilds=2 --ipus-per-replica 2 --numa-aware=yes \\
        --host $HOSTS --vipu-server-host=$VIPU_SERVER_HOST --vipu-server-timeout=600 \\
        --vipu-partition=gcl128 --vipu-cluster=2xPOD64 --reset-partition=no --update-partition=yes \\
        --remove-partition=0 \\
        --mpi-global-args="--tag-output  --allow-run-as-root  --mca oob_tcp_if_include $NETMASK --mca btl_tcp_if_include $NETMASK" \\
        --mpi-local-args="-x LD_LIBRARY_PATH -x OPAL_PREFIX -x PATH -x CPATH -x PYTHONPATH -x TMP=/tmp -x IPUOF_VIPU_API_TIMEOUT=600 -x GCL_LOG_LEVEL=INFO" \\
        {PRINTER} --config configs/pretrain_large_128.json""",
     dict(instances=2, replicas=4, ipus=2, hosts=["hostA", "hostB"], ild="4",
          ignored=["--vipu-server-host", "--vipu-server-timeout", "--vipu-partition", "--vipu-cluster",
                   "--reset-partition", "--update-partition", "--remove-partition"])),
    # RNN-T on a POD64: settings in single quotes inside a variable, executable cache, sync type
    (f"""poprun -vv --host $HOSTS --mpi-global-args='--tag-output --allow-run-as-root --mca oob_tcp_if_include "$NETMASK" --mca btl_tcp_if_include "$NETMASK"' \\
        --mpi-local-args=' -x OPAL_PREFIX -x LD_LIBRARY_PATH -x PATH -x PYTHONPATH -x IPUOF_VIPU_API_TIMEOUT=600 -x POPLAR_LOG_LEVEL -x POPLAR_RUNTIME_OPTIONS' \\
        --update-partition=yes --reset-partition=no --vipu-server-timeout 600 \\
        --ipus-per-replica 1 --numa-aware 1 --vipu-server-host "$VIPU_SERVER_HOST" \\
        --vipu-partition="$PARTITION" --sync-type ST_POD_NATIVE_DEFAULT \\
        --num-instances 4 --num-replicas 8 --executable-cache-path "$CACHE" \\
        {PRINTER} --model-conf-file configs/transducer-large-1023sp.yaml""",
     dict(instances=4, replicas=8, ipus=1, hosts=["hostA", "hostB"], cache=True,
          ignored=["--update-partition", "--reset-partition", "--vipu-server-timeout", "--vipu-server-host",
                   "--vipu-partition", "--sync-type"])),
    # MPI arguments kept in their own variables, each a quoted string (GPT/BERT TensorFlow scripts)
    (f"""poprun -vv --host $HOSTS --mpi-global-args '--mca oob_tcp_if_include $NETMASK --mca btl_tcp_if_include $NETMASK ' \\
        --mpi-local-args ' -x OPAL_PREFIX -x LD_LIBRARY_PATH -x PATH -x PYTHONPATH -x IPUOF_VIPU_API_TIMEOUT -x TMPDIR -x TF_POPLAR_FLAGS' \\
        --update-partition=yes --reset-partition=no --vipu-server-timeout 600 --vipu-server-host $VIPU_SERVER_HOST \\
        --vipu-partition $PARTITION --executable-cache-path $CACHE \\
        --num-instances 2 --num-replicas 2 {PRINTER} --config bert_large_pod16""",
     dict(instances=2, replicas=2, ipus=1, hosts=["hostA", "hostB"], cache=True,
          ignored=["--update-partition", "--reset-partition", "--vipu-server-timeout", "--vipu-server-host",
                   "--vipu-partition"])),
    # ViT on a POD64: bare --host=, server, partition, local args only
    (f"""poprun -vv --num-replicas=2 --host=$HOSTS --ipus-per-replica=2 --num-instances=2 \\
        --vipu-server-host=$VIPU_SERVER_HOST --vipu-server-timeout=3600 --vipu-partition=$PARTITION \\
        --mpi-local-args=" -x OPAL_PREFIX -x LD_LIBRARY_PATH -x PATH -x PYTHONPATH -x CPATH -x \\
        IPUOF_VIPU_API_TIMEOUT=3600 -x POPLAR_LOG_LEVEL=WARN -x POPLAR_SDK_ENABLED" \\
        {PRINTER} --config vit_base_pod64""",
     dict(instances=2, replicas=2, ipus=2, hosts=["hostA", "hostB"],
          ignored=["--vipu-server-host", "--vipu-server-timeout", "--vipu-partition"])),
    # PopXL/popxl-addons GPT: allocation, ILDs, --only-output-from-instance, --print-topology
    (f"""poprun --vipu-allocation=$ALLOCATION --vipu-partition=$PARTITION --num-ilds 2 --num-instances 4 \\
        --num-replicas 4 --ipus-per-replica 4 --host $HOSTS --remove-partition=no --print-topology=yes \\
        --only-output-from-instance 0 --mpi-global-args="--tag-output" {PRINTER} --config gpt3_2.7B""",
     dict(instances=4, replicas=4, ipus=4, hosts=["hostA", "hostB"], ild="8", only=0,
          ignored=["--vipu-allocation", "--vipu-partition", "--remove-partition"])),
    # buildbot-style test lines: one argument per word with '=', no partition
    ("""poprun '--mpi-global-args=--tag-output --allow-run-as-root' --num-replicas=4 --num-instances=2 \\
        --vipu-server-timeout=600 python3 "$PRINTER" --dataset=cifar-10 --generated-data""",
     dict(instances=2, replicas=4, ipus=1, hosts=None, ignored=["--vipu-server-timeout"])),
    # compile-only (offline) run with an executable cache, as the BERT README shows
    (f"""poprun --offline-mode=on -vv --num-ilds 2 --num-instances 2 --num-replicas 8 --ipus-per-replica 1 \\
        --executable-cache-path=$CACHE {PRINTER} --compile-only""",
     dict(instances=2, replicas=8, ipus=1, hosts=None, cache=True, ild="4", ignored=["--offline-mode"])),
    # Slurm-era scripts: --host-subnet instead of the *_tcp_if_include arguments, venv sync
    (f"""poprun --host $HOSTS --host-subnet $NETMASK --num-instances 2 --num-replicas 2 \\
        --vipu-allocation=c123 --synchronise-python-venv=1 --distribute-ssh-key yes \\
        --vipu-partition-attempts 3 {PRINTER}""",
     dict(instances=2, replicas=2, ipus=1, hosts=["hostA", "hostB"],
          ignored=["--vipu-allocation", "--synchronise-python-venv", "--distribute-ssh-key",
                   "--vipu-partition-attempts"])),
    # the smallest line: no option but the program
    (f"""poprun {PRINTER}""", dict(instances=1, replicas=1, ipus=1, hosts=None, ignored=[])),
    # -H, a host list with brackets, --vipu-server-port, the V-IPU port and a '--' before the program
    (f"""poprun -H fake[1-2] --num-instances 4 --num-replicas 8 --vipu-server-port 8090 \\
        --vipu-server-host localhost -- {PRINTER} --epochs 1""",
     dict(instances=4, replicas=8, ipus=1, hosts=["fake1", "fake2"],
          ignored=["--vipu-server-port", "--vipu-server-host"])),
]
