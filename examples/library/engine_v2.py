# engine v2: new scoring. Actors deployed before this was published keep v1.
VERSION = 2


def score(points):
    return points * 20
