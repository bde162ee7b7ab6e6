"""How a triangle of a level is named: its object and the face a designer selects.

One home for the words "Curb 45cm face 5", used by the level report (``report.py``: the
``{"triangle", "object", "face"}`` of every listed triangle) and the extension (row labels,
walk event markers). A level read from Blender carries a map from every triangle back to its
object and its original polygon (the extension's ``LevelGeometry``: ``objects``,
``tri_object``, ``tri_orig_face``); plain core use has none, and a triangle is then only its
index.
"""

from __future__ import annotations


class TriangleNames:
    """Names triangles by object and face. ``geometry`` is the extension's LevelGeometry
    (``objects``, ``tri_object`` (M,) int, ``tri_orig_face`` (M,) int, -1 where a modifier
    made the face) or None (plain core: the object and face are null)."""

    def __init__(self, geometry=None):
        self.geometry = geometry

    def name(self, triangle) -> dict:
        """``{"triangle": t, "object": str | None, "face": int | None}``: the face is None
        when no original face stands for the triangle (array, mirror, geometry nodes)."""
        t = int(triangle)
        g = self.geometry
        if g is None or t < 0 or t >= len(g.tri_object):
            return {"triangle": t, "object": None, "face": None}
        face = int(g.tri_orig_face[t])
        return {"triangle": t, "object": str(g.objects[int(g.tri_object[t])]),
                "face": face if face >= 0 else None}

    def object_of(self, triangle) -> str | None:
        """The object's name (an instance: ``"<instancer>/<object>"``), or None."""
        return self.name(triangle)["object"]

    def face_of(self, triangle) -> int | None:
        """The original face index a designer selects in Edit Mode, or None."""
        return self.name(triangle)["face"]

    def label(self, triangle) -> str:
        """``"Curb 45cm face 5"``; ``"Stairs (a face made by a modifier)"`` where no original
        face stands for it; ``"triangle 12"`` without a map (or -1: ``"no triangle"``)."""
        n = self.name(triangle)
        if n["object"] is None:
            return "no triangle" if n["triangle"] < 0 else f"triangle {n['triangle']}"
        if n["face"] is None:
            return f"{n['object']} (a face made by a modifier)"
        return f"{n['object']} face {n['face']}"
