"""Insertion-ordered sets. The metering transformer turns set displays and
set comprehensions into ordered_set, and the actor builtins `set` and
`frozenset` are ordered_set and frozen_ordered_set, so iteration order never
depends on hashes or addresses."""

import _pvm_rt as _rt


class ordered_set:
    __slots__ = ("_pvm_d",)

    def __init__(self, iterable=()):
        it = _rt.sized(iterable)
        _rt.mem(len(it) * 24)
        self._pvm_d = dict.fromkeys(it)

    @classmethod
    def _pvm_from(cls, d):
        s = cls.__new__(cls)
        s._pvm_d = d
        return s

    def __len__(self):
        return len(self._pvm_d)

    def __iter__(self):
        return iter(self._pvm_d)

    def __contains__(self, x):
        return x in self._pvm_d

    def __repr__(self):
        if not self._pvm_d:
            return type(self).__name__ + "()"
        return "{" + ", ".join(repr(x) for x in self._pvm_d) + "}"

    def __eq__(self, other):
        if isinstance(other, ordered_set):
            return self._pvm_d.keys() == other._pvm_d.keys()
        if isinstance(other, (set, frozenset)):
            return self._pvm_d.keys() == other
        return NotImplemented

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    __hash__ = None

    def _pvm_other(self, other):
        if isinstance(other, ordered_set):
            _rt.charge(len(other._pvm_d))
            return other._pvm_d
        return dict.fromkeys(_rt.sized(other))

    def __le__(self, other):
        o = self._pvm_other(other)
        _rt.charge(len(self._pvm_d))
        return all(x in o for x in self._pvm_d)

    def __lt__(self, other):
        o = self._pvm_other(other)
        return len(self._pvm_d) < len(o) and self.__le__(other)

    def __ge__(self, other):
        o = self._pvm_other(other)
        return all(x in self._pvm_d for x in o)

    def __gt__(self, other):
        o = self._pvm_other(other)
        return len(self._pvm_d) > len(o) and self.__ge__(other)

    def __or__(self, other):
        o = self._pvm_other(other)
        _rt.charge(len(self._pvm_d))
        d = dict(self._pvm_d)
        d.update(o)
        _rt.mem(len(o) * 24)
        return type(self)._pvm_from(d)

    def __and__(self, other):
        o = self._pvm_other(other)
        _rt.charge(len(self._pvm_d))
        return type(self)._pvm_from({x: None for x in self._pvm_d if x in o})

    def __sub__(self, other):
        o = self._pvm_other(other)
        _rt.charge(len(self._pvm_d))
        return type(self)._pvm_from({x: None for x in self._pvm_d if x not in o})

    def __xor__(self, other):
        o = self._pvm_other(other)
        _rt.charge(len(self._pvm_d))
        d = {x: None for x in self._pvm_d if x not in o}
        for x in o:
            if x not in self._pvm_d:
                d[x] = None
        return type(self)._pvm_from(d)

    __ror__ = __or__
    __rand__ = __and__
    __rxor__ = __xor__

    def union(self, *others):
        r = self
        for o in others:
            r = r | o
        return r if others else self.copy()

    def intersection(self, *others):
        r = self
        for o in others:
            r = r & o
        return r if others else self.copy()

    def difference(self, *others):
        r = self
        for o in others:
            r = r - o
        return r if others else self.copy()

    def symmetric_difference(self, other):
        return self ^ other

    def issubset(self, other):
        return self <= other

    def issuperset(self, other):
        return self >= other

    def isdisjoint(self, other):
        o = self._pvm_other(other)
        return not any(x in o for x in self._pvm_d)

    def copy(self):
        _rt.charge(len(self._pvm_d))
        _rt.mem(len(self._pvm_d) * 24)
        return type(self)._pvm_from(dict(self._pvm_d))


class frozen_ordered_set(ordered_set):
    __slots__ = ()

    def __hash__(self):
        return hash(frozenset(self._pvm_d))


class mutable_ordered_set(ordered_set):
    __slots__ = ()

    def add(self, x):
        if x not in self._pvm_d:
            _rt.mem(24)
        self._pvm_d[x] = None

    def discard(self, x):
        self._pvm_d.pop(x, None)

    def remove(self, x):
        del self._pvm_d[x]

    def pop(self):
        if not self._pvm_d:
            raise KeyError("pop from an empty set")
        x = next(iter(self._pvm_d))
        del self._pvm_d[x]
        return x

    def clear(self):
        self._pvm_d.clear()

    def update(self, *others):
        for o in others:
            d = self._pvm_other(o)
            _rt.mem(len(d) * 24)
            self._pvm_d.update(d)

    def intersection_update(self, *others):
        for o in others:
            self._pvm_d = (self & o)._pvm_d

    def difference_update(self, *others):
        for o in others:
            self._pvm_d = (self - o)._pvm_d

    def symmetric_difference_update(self, other):
        self._pvm_d = (self ^ other)._pvm_d

    def __ior__(self, other):
        self.update(other)
        return self

    def __iand__(self, other):
        self.intersection_update(other)
        return self

    def __isub__(self, other):
        self.difference_update(other)
        return self

    def __ixor__(self, other):
        self.symmetric_difference_update(other)
        return self


# Public names: `set` in actor code is mutable_ordered_set.
OrderedSet = mutable_ordered_set
FrozenOrderedSet = frozen_ordered_set
