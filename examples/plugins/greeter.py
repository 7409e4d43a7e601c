"""An example trusted plugin. It runs with the full authority of the host process: load only code
you would merge into the host yourself."""

from dotboxd.host import Cost, Effect, Int32, host_binding
from dotboxd.plugins import PluginRegistry

name = "greeter"
version = "1.0.0"


@host_binding(
    id="greeter.double",
    capability="greeter.use",
    effects=Effect.CPU | Effect.HOST_STATE_READ,
    cost=Cost(base_fuel=2),
)
def double(x: Int32) -> Int32:
    return x * 2


def setup(registry: PluginRegistry) -> None:
    registry.add_binding(double)
    registry.add_method("greeter.hello", lambda who: f"hello, {who}")


def teardown() -> None:
    pass
