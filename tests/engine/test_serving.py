"""A hosted program starts before gpufleet has made its monitor: the port is open first, a call that
comes early waits for the monitor (bounded), and gpufleet's side imports neither the Pulumi SDK nor
the catalog before the program is on its way."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import grpc
import pytest
from google.protobuf import empty_pb2
from pulumi.runtime.proto import resource_pb2, resource_pb2_grpc

from gpufleet.engine.monitor import Monitor, handlers
from gpufleet.engine.serving import Served


def test_a_call_before_the_monitor_is_made_waits_for_it():
    answered: list[object] = []
    with Served(bound=30) as served, grpc.insecure_channel(served.address) as channel:
        call = threading.Thread(
            target=lambda: answered.append(resource_pb2_grpc.ResourceMonitorStub(channel).GetDeploymentInfo(empty_pb2.Empty(), timeout=30))
        )
        call.start()
        time.sleep(0.5)  # the call is in: no handler yet
        assert not answered
        served.serve(handlers(Monitor("p", "s", None, "us-east-1", None)))
        call.join(30)
    [info] = answered
    assert resource_pb2.RESOURCE_MONITOR_FEATURE_TRANSFORMS in info.supportedFeatures


def test_a_call_that_outwaits_its_bound_finds_no_method():
    with Served(bound=0.2) as served, grpc.insecure_channel(served.address) as channel:
        with pytest.raises(grpc.RpcError) as raised:
            resource_pb2_grpc.ResourceMonitorStub(channel).GetDeploymentInfo(empty_pb2.Empty(), timeout=30)
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_the_hosted_path_starts_the_program_before_the_sdk_and_the_catalog_are_imported():
    code = (
        "import sys\n"
        "import gpufleet.engine.preview, gpufleet.engine.program_host, gpufleet.engine.user_program\n"
        "print(sorted(m for m in sys.modules if m in ('pulumi', 'gpufleet.catalog.catalog', 'gpufleet.engine.monitor', 'gpufleet.engine.plan')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
