"""gpufleet.plans.wire: the Pulumi wire's values as a plan holds them."""

from pulumi.output import Unknown
from pulumi.runtime import rpc

from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.plans.wire import SECRET_SIG, SIG_KEY, json_value


def test_the_protocol_constants_are_the_sdks():
    assert (SIG_KEY, SECRET_SIG, UNKNOWN) == (rpc._special_sig_key, rpc._special_secret_sig, rpc.UNKNOWN)


def test_values_read_as_json():
    secret = {SIG_KEY: SECRET_SIG, "value": {"n": 2.0}}
    assert json_value({"a": [1.0, 1.5, secret], "b": Unknown(), "c": UNKNOWN, "d": (True, "x")}) == {
        "a": [1, 1.5, {"n": 2}],
        "b": UNKNOWN,
        "c": UNKNOWN,
        "d": [True, "x"],
    }
