# A counter actor in the CIP-6 cowboy_sdk style: state lives in
# self.storage, every public method is a handler.
from cowboy_sdk import actor, runtime


@actor
class Counter:
    def __init__(self):
        self.storage["count"] = 0

    def increment(self, by=1):
        if by <= 0:
            raise ValueError("increment must be positive")
        self.storage["count"] += by
        runtime.emit_event("incremented", {"by": by, "count": self.storage["count"]})
        return self.storage["count"]

    def get(self):
        return self.storage["count"]
