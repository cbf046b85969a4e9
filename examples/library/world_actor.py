# Seed 000 §4: a game actor that imports its deployer's `engine` library.
from cowboy_sdk import actor, public, runtime
import engine


@actor
class World:
    def init(self, payload):
        runtime.emit_event("init", {"version": engine.VERSION})
        self.storage["version"] = engine.VERSION

    @public
    def version(self):
        return engine.VERSION

    @public
    def score(self, points):
        return engine.score(points)
