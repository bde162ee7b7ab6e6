"""The overlay's screen-space pass (POST_PIXEL): event markers with labels, the push-out's depth
label, the legend. Sizes are pixels (times the UI scale), so they read at any zoom.

Layout is pure numpy (``project``, ``stack_markers``, ``legend_rows``): testable headless.
Drawing uses ``gpu`` and ``blf`` inside the draw call only (never at import or register time):
dark translucent boxes behind every text, a filled diamond per event marker in its kind's
colour, the label in that colour. Markers whose screen positions fall within ``STACK_PX`` of
each other (events at one spot) fan out side by side with a leader line to the spot, and
their labels stack one per line, so none hides another.
"""

from __future__ import annotations

import numpy as np

TEXT_PX = 13  # label font size, pixels at UI scale 1
LEGEND_TEXT_PX = 12
GLYPH_PX = 7  # half-diagonal of an event marker's diamond
GLYPH_SPACING_PX = 18  # centre to centre of markers fanned out at one spot
STACK_PX = 20  # markers closer than this on screen are one spot
LINE_PX = 17  # label line height
PAD_PX = 4  # padding inside label boxes, gap between a marker and its label
LEGEND_MARGIN_PX = 12
SWATCH_PX = 10
BOX = (0.05, 0.05, 0.07, 0.72)  # label background
TEXT_WHITE = (1.0, 1.0, 1.0, 1.0)


def project(points, persp, width: int, height: int):
    """(xy (N, 2) float64 pixels, visible (N,) bool) of world points (N, 3) under the 4x4
    view-projection ``persp``; visible: in front of the camera and inside the region."""
    p = np.asarray(points, np.float64).reshape(-1, 3)
    m = np.asarray(persp, np.float64)
    clip = p @ m[:3, :3].T + m[:3, 3]
    w = p @ m[3, :3] + m[3, 3]
    ok = w > 1e-9
    ndc = clip[:, :2] / np.where(ok, w, 1.0)[:, None]
    xy = np.stack([(ndc[:, 0] + 1.0) * 0.5 * width, (ndc[:, 1] + 1.0) * 0.5 * height], 1)
    inside = (xy[:, 0] >= 0) & (xy[:, 0] <= width) & (xy[:, 1] >= 0) & (xy[:, 1] <= height)
    return xy, ok & inside


def stack_markers(xy, visible, scale: float = 1.0):
    """Marker and label positions for markers at screen points ``xy`` (N, 2).

    Returns (glyph (N, 2), label (N, 2), anchor (N, 2)) pixels: visible markers within
    STACK_PX of a group's first member join it (in input order); a group of n fans its
    glyphs out in a row centred on its mean point (the anchor) and stacks the labels to the
    right of the row, one line each, the first on top. Hidden markers keep their point."""
    xy = np.asarray(xy, np.float64).reshape(-1, 2)
    glyph, label, anchor = xy.copy(), xy.copy(), xy.copy()
    groups: list[list[int]] = []
    for i in np.flatnonzero(visible).tolist():
        for g in groups:
            if np.hypot(*(xy[i] - xy[g[0]])) < STACK_PX * scale:
                g.append(i)
                break
        else:
            groups.append([i])
    for g in groups:
        a = xy[g].mean(axis=0)
        n = len(g)
        half = 0.5 * (n - 1) * GLYPH_SPACING_PX * scale
        for k, i in enumerate(g):
            anchor[i] = a
            glyph[i] = a + (k * GLYPH_SPACING_PX * scale - half, 0.0)
            label[i] = a + (half + (GLYPH_PX + 2 * PAD_PX) * scale,
                            ((n - 1) * 0.5 - k) * LINE_PX * scale - 0.35 * TEXT_PX * scale)
    return glyph, label, anchor


def legend_rows(entries, height: int, scale: float = 1.0):
    """(swatch origin, text origin) pixel pairs of legend ``entries`` stacked upwards from
    the region's bottom-left corner, the first entry on top."""
    n = len(entries)
    out = []
    for k in range(n):
        y = LEGEND_MARGIN_PX * scale + (n - 1 - k) * LINE_PX * scale
        x = LEGEND_MARGIN_PX * scale
        out.append(((x, y), (x + (SWATCH_PX + PAD_PX) * scale, y + 1.0 * scale)))
    return out


# ---------------------------------------------------------------- drawing (GPU only here)
def _rects(rects, colors):
    """Triangles (6 per rect) for pixel rects (x0, y0, x1, y1) with per-rect colours."""
    if not rects:
        return np.empty((0, 2), np.float32), np.empty((0, 4), np.float32)
    r = np.asarray(rects, np.float32)
    x0, y0, x1, y1 = r.T
    pts = np.stack([np.stack([x0, y0], 1), np.stack([x1, y0], 1), np.stack([x1, y1], 1),
                    np.stack([x0, y0], 1), np.stack([x1, y1], 1), np.stack([x0, y1], 1)], 1)
    return pts.reshape(-1, 2), np.repeat(np.asarray(colors, np.float32), 6, axis=0)


def _diamonds(centres, colors, radius):
    if not len(centres):
        return np.empty((0, 2), np.float32), np.empty((0, 4), np.float32)
    c = np.asarray(centres, np.float32)
    d = np.array([(0, -1), (1, 0), (0, 1), (0, -1), (0, 1), (-1, 0)], np.float32) * radius
    return (c[:, None, :] + d[None]).reshape(-1, 2), np.repeat(
        np.asarray(colors, np.float32), 6, axis=0)


class TextItem:
    """One text to draw: origin (pixels), text, colour, font size (pixels)."""

    __slots__ = ("origin", "text", "color", "size")

    def __init__(self, origin, text, color, size):
        self.origin, self.text, self.color, self.size = origin, text, color, size


def _text_boxes(items, measure, scale):
    rects = []
    for it in items:
        w, h = measure(it)
        x, y = it.origin
        rects.append((x - PAD_PX * scale, y - PAD_PX * scale,
                      x + w + PAD_PX * scale, y + max(h, 0.7 * it.size) + PAD_PX * scale))
    return rects


def _event_items(events, persp, width, height, scale):
    """Texts, diamonds (pts, cols) and leader lines (pts, cols) of the event markers."""
    xy, vis = project(np.array([e.position for e in events]), persp, width, height)
    glyph, label, anchor = stack_markers(xy, vis, scale)
    texts, lines, line_cols = [], [], []
    shown = np.flatnonzero(vis).tolist()
    for i in shown:
        e = events[i]
        texts.append(TextItem(tuple(label[i]), e.label, e.color, TEXT_PX * scale))
        if np.hypot(*(glyph[i] - anchor[i])) > 0.5:
            lines += [anchor[i], glyph[i]]
            line_cols += [e.color, e.color]
    pts, cols = _diamonds(glyph[vis], [events[i].color for i in shown], GLYPH_PX * scale)
    return texts, (pts, cols), (lines, line_cols)


def _push_items(pushes, persp, width, height, scale):
    """The depth label of each push-out, beside its deepest contact."""
    xy, vis = project(np.array([p.deepest for p in pushes]), persp, width, height)
    off = np.array([2 * GLYPH_PX, GLYPH_PX]) * scale
    return [TextItem(tuple(at + off), p.label, TEXT_WHITE, TEXT_PX * scale)
            for p, at, ok in zip(pushes, xy, vis) if ok]


def _legend_items(legend, height, scale):
    texts, pts, cols = [], [], []
    s = SWATCH_PX * scale
    for (swatch, origin), (color, text) in zip(legend_rows(legend, height, scale), legend):
        p, c = _rects([(swatch[0], swatch[1], swatch[0] + s, swatch[1] + s)], [color])
        pts.append(p)
        cols.append(c)
        texts.append(TextItem(origin, text, TEXT_WHITE, LEGEND_TEXT_PX * scale))
    return texts, pts, cols


def _stacked(arrays, columns):
    if not arrays:
        return np.empty((0, columns), np.float32)
    return np.concatenate(arrays).astype(np.float32).reshape(-1, columns)


def screen_items(events, pushes, legend, persp, width, height, scale):
    """Everything the pass draws, laid out: (texts [TextItem], flat triangles (pts, cols),
    leader lines (pts, cols)) in pixels. Pure numpy: tests lay out without a GPU."""
    texts, tris, tri_cols, lines, line_cols = [], [], [], [], []
    if events:
        t, (p, c), (ln, lc) = _event_items(events, persp, width, height, scale)
        texts += t
        tris.append(p)
        tri_cols.append(c)
        lines += ln
        line_cols += lc
    if pushes:
        texts += _push_items(pushes, persp, width, height, scale)
    t, p, c = _legend_items(legend, height, scale)
    texts += t
    tris += p
    tri_cols += c
    return (texts, (_stacked(tris, 2), _stacked(tri_cols, 4)),
            (_stacked(lines, 2), _stacked(line_cols, 4)))


def draw(events, pushes, legend, persp, width: int, height: int, scale: float = 1.0) -> None:
    """Draw the pass with pixel-space matrices already loaded (a POST_PIXEL handler, or
    ``overlay.draw_offscreen``)."""
    import blf  # noqa: PLC0415  (text only while drawing)
    import gpu  # noqa: PLC0415
    from gpu_extras.batch import batch_for_shader  # noqa: PLC0415

    texts, (tri_pts, tri_cols), (line_pts, line_cols) = screen_items(
        events, pushes, legend, persp, width, height, scale)
    if not texts and not tri_pts.shape[0]:
        return
    font = 0

    def measure(it):
        blf.size(font, it.size)
        return blf.dimensions(font, it.text)

    box_pts, box_cols = _rects(_text_boxes(texts, measure, scale), [BOX] * len(texts))
    flat = gpu.shader.from_builtin("FLAT_COLOR")
    gpu.state.blend_set("ALPHA")
    gpu.state.depth_test_set("NONE")
    try:
        for pts, cols, kind in ((box_pts, box_cols, "TRIS"), (line_pts, line_cols, "LINES"),
                                (tri_pts, tri_cols, "TRIS")):
            if pts.shape[0]:
                pos = np.zeros((pts.shape[0], 3), np.float32)
                pos[:, :2] = pts
                flat.bind()
                batch_for_shader(flat, kind, {"pos": pos, "color": cols}  # type: ignore[dict-item]
                                 ).draw(flat)
        for it in texts:
            blf.size(font, it.size)
            blf.color(font, *it.color)
            blf.position(font, float(it.origin[0]), float(it.origin[1]), 0.0)
            blf.draw(font, it.text)
    finally:
        gpu.state.blend_set("NONE")
