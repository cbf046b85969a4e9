# engine v1: shared game rules, published as an account-scoped library.
VERSION = 1


def score(points):
    return points * 10
