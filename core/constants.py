"""Named tolerances. Every epsilon in ``core`` (a bound on float rounding or noise, a
threshold below which a quantity counts as zero) comes from here, with its unit and reason;
``tests/core/test_core_purity.py`` fails on a float literal below 1e-3 bound to a name anywhere
else in core. Domain parameters (how far apart stair risers may be, how many rows a report
lists, the stand test's candidate layout) live with the code they parametrise.

A tolerance changed after a bug names the test that pins it.
"""

# Metres. Below anything visible in a level, above float64 rounding of coordinates at 10 km
# (ulp(1e4) ~ 1.8e-12 m, and products of a few of them). Used as the slack when a caller
# separates shapes by moving along `normal * (depth + CONTACT_SLOP)`.
CONTACT_SLOP = 1e-7

# Squared-length threshold, relative to the squared scale of the inputs, under which a
# direction (segment, triangle normal) is treated as degenerate (zero length / zero area).
# 1e-24 relative squared = 1e-12 relative length: only true float-rounding degeneracy.
DEGENERATE_REL2 = 1e-24

# Relative padding of broadphase query boxes and of the plane-slab reject (core/mesh):
# the pad is MESH_CULL_REL * (1 + coordinate scale + radius) metres. Culling is only an
# optimisation; the exact kernels decide every surviving pair, so the pad only has to exceed
# float64 rounding of a dot product (~1e-15 relative) by a wide margin.
MESH_CULL_REL = 1e-9

# Fraction of that margin a triangle's corners may sit off its stored plane and still be
# culled by plane distance (core/mesh/rows.py); farther (slivers) and the plane-based culls skip
# it. Half the margin stays for the rounding of the query's own dot products.
PLANE_SLACK_REL = 0.5

# Walkability (core/checks/walkability.py): default half-width, in degrees, of the band around
# vertical (90 deg from up) in which a face counts as a WALL rather than STEEP or CEILING.
WALL_TOLERANCE_DEG = 5.0

# Radians. A face whose slope is within this of the limit counts as AT the limit (walkable),
# in classify_triangles, ControllerSettings.cos_max_slope (the controller, the walk events)
# and the audits. Faces are authored at the limit in float32 (Blender stores vertices so) and
# moved around in float64; the tolerance must cover the tilt that rounding gives such a face.
# Derivation: float32 coordinates within 100 m of the origin are rounded by at most half an
# ulp, 2**-17 m ~ 3.8e-6 m (|x| in [64, 128)), so each vertex moves by at most
# sqrt(3) * 3.8e-6 = 6.6e-6 m. Tilting a plane by moving its three vertices by at most d
# turns its normal by at most ~3 d / h, h the face's smallest altitude: 9.9e-5 rad for
# h = 0.2 m, so 1e-4 rad covers every float32 face at least 0.2 m across within 100 m (and
# larger faces farther out: the tilt shrinks with h). float64 at 10 km rounds by
# 9.1e-13 m: 1.4e-11 rad for the same face, far inside. The other side: a face 0.05 deg
# (8.7e-4 rad) steeper than the limit stays STEEP with float32 rounding on top
# (8.7e-4 - 1e-4 - 1e-4 > 0). Was 1e-12 rad: a float32 45 deg ramp within 50 m was not
# walkable at 45 deg in 5 of 24 positions, and the sample level moved 10 km away flipped
# ramp_45deg to slope_too_steep. Pinned by tests/core/test_walkability.py (float32 ramps at 100
# positions within 100 m, float64 ramps at 10 km, +0.05 deg steeper).
SLOPE_LIMIT_TOL_RAD = 1e-4

# Significant decimal digits that round-trip a float32 (numpy.finfo(float32).precision + 1 = 7,
# the shortest decimal of any float32 a designer types): Blender stores FloatProperty values
# and the unit scale as float32, so a value read back as 0.3499999940395355 was typed as 0.35
# (core.controller.settings.as_typed; tests/core/test_presets.py pins the round trip).
FLOAT32_DIGITS = 7

# ---------------------------------------------------------------- character controller
# (core/controller/controller.py, core/walk/walkthrough.py, core/checks/audits/)

# Metres. A displacement shorter than this is not swept (float noise, not motion). Far below
# Unity's minMoveDistance 0.001 so it never eats a real move at 240 Hz.
CONTROLLER_MIN_MOVE = 1e-7

# Multiple of skin_width: the floor counts as touched when the downward gap is within
# GROUND_PROBE_SKINS * skin_width (moves stop skin_width short of surfaces, so the resting
# gap is ~skin_width; twice that absorbs float drift without reaching the next step).
GROUND_PROBE_SKINS = 2.0

# Cosine: a contact supports the character when its normal (obstacle -> capsule) has at
# least this up component, i.e. it touches the lower cap within ~75 deg of straight down
# (a perch on a ledge holds until the axis is ~0.97 radius past the edge). Contacts near the
# cap's equator (the next stair nosing in front) never support. Pinned by test_controller
# (ledge perch, stairs at 30 Hz: 0.05 let the nosing ahead count as the floor).
SUPPORT_MIN_COS = 0.25

# ---------------------------------------------------------------- engine models
# (ControllerSettings.model "jolt" / "rapier"; core/settings.py, docs "Engine models")
# Metres. An engine model collides with radius + skin_width (the engine's padding kept from
# every surface) and stops this far short of what it hits, so that it passes a corridor
# 2 x (radius + skin_width) wide and a ceiling height + 2 x skin_width high as the engines do
# (tools/bench_engines.py: both engines pass 0.7425 m and 1.8425 m with radius 0.35, height
# 1.8, padding 0.02; Rapier refuses exactly 1.84 m), with the gap far below those margins.
# The Godot preset runs with a 1 mm skin too (safe_margin 0.001).
ENGINE_CONTACT_GAP = 1e-3
# Cosines. An engine model is supported by a contact below its bottom sphere's centre (Jolt's
# supporting volume, the plane through that centre in its sample; Rapier grounds on any contact
# whose normal points up): a character perches on an edge until its axis is about a radius past
# it, and lands on the far edge of a gap it meets with its lower half. Rapier: any upward
# normal (1e-3, above rounding). Jolt leaves an edge a little earlier (its stick-to-floor keeps
# the padding along the sweep, not along the normal): 0.1 fits the gaps it crosses at 30, 60
# and 120 Hz best (tools/bench_engines.py gap lanes: 1.5 / 1.35 / 0.95 m crossed against
# Jolt's 1.55 / 1.35 / 1.0; 0.05 gave 1.55 / 1.4 / 1.05, 0.15 gave 1.5 / 1.3 / 1.3).
RAPIER_SUPPORT_MIN_COS = 1e-3
JOLT_SUPPORT_MIN_COS = 0.1
# Metres. Rapier's autostep moves the lifted capsule forward by what is left of the frame's
# horizontal displacement (at most min_width), then lets it down: a stride this short or
# shorter leaves its bottom sphere on a riser's edge at a wall-steep normal, where the walk
# stalls or not with the frame's phase and float rounding (issue 26, 120 Hz: 3.3 cm). The
# Rapier model then climbs only risers its lifted bottom clears (``ControllerSettings.
# rapier_stride_climb``). Measured with Rapier (rapier3d 0.36.1, single risers of 0.40 and
# 0.42 m, 12 phases and places each): every walk climbs at 4.4 cm (90 Hz) and more; at 4 cm
# (100 Hz) 0.40 m is climbed 12/12, 0.42 m 2/12; 3.5 cm lies between 120 and 100 Hz.
RAPIER_SHORT_STRIDE = 0.035
# Metres. Rapier's controller is grounded while a contact whose normal points up
# (RAPIER_SUPPORT_MIN_COS) is within its offset plus this of the capsule (``predict_ground``:
# offset + 0.05), past where its snap to the ground still holds it: a character walking off
# an edge keeps its falling speed at one frame of gravity until it is that far clear.
RAPIER_GROUND_PREDICTION = 0.05
# Metres. Rapier's slide moves a character this far along the normal of every surface it
# hits (``normal_nudge_factor``, 1e-4 by default): one standing inside its offset (set down on
# the floor, not the offset above it) hits the floor each frame and rises by this much, until
# it floats its offset above it (measured, tools/bench_engines.py at 120 Hz: the foot at
# 0.0046 m after 45 frames from a start on the floor). Until then it meets a floor's edge
# before its sphere is over it and rides up over it (core.walk.edges.rapier_edge_ride).
RAPIER_NORMAL_NUDGE = 1e-4

# Metres. A walk moves a character whose support on an edge ends within a frame first to this
# far (across the edge) short of where the support ends, so that its stick-to-floor still
# holds there (core/controller/departure.py, core/walk/edges.py): float rounding of that
# point, far below anything visible (the edge still supports it there; it then leaves from
# the support line itself). Pinned by tests/core/test_engine_models.py (exact gap sweeps at
# 30, 60 and 120 Hz).
DEPARTURE_TOL = 1e-6
# Dimensionless, a fraction of an edge's length. A supporting contact this close to an end of
# its triangle's edge is a corner: the character rolls on the point, not on the edge's line.
EDGE_END_MARGIN = 1e-9
# Metres. A supporting contact this close to an edge's line (or corner) is still on that edge
# (the contact slides along the line as the character walks; float rounding of the probe's
# hit point is ~1e-12 m): the walk tells a support that ends from one that took over.
EDGE_LINE_TOL = 1e-6

# Cosine: a contact whose normal is this parallel to its triangle's face normal is an
# interior (face) contact; otherwise it is an edge/vertex contact and the ground state is
# decided from all nearby contacts (a stair nosing belongs to a walkable tread).
FACE_CONTACT_COS = 1.0 - 1e-6

# Cosine of 75 deg (Jolt mWalkStairsCosAngleForwardContact): a step-up is only tried when
# the desired direction pushes into the blocking obstacle at least this squarely, so
# walking along a wall beside stairs never steps (test_controller).
STEP_FORWARD_MIN_COS = 0.25881904510252074

# Metres. Horizontal offset past the blocking contact at which the riser height is probed
# by a ray (must land on the riser's top, not its face).
STEP_PROBE_OFFSET = 0.01

# Gauss-Seidel passes and the number of deepest contacts per character used by the
# penetration-recovery plane solver (Box2D mover style).
DEPENETRATION_PASSES = 4
DEPENETRATION_MAX_CONTACTS = 8
# Dimensionless. A penetration-recovery round that leaves a capsule's deepest contact deeper
# than this fraction of the previous round's (and still deeper than skin_width / 2, i.e. truly
# penetrating) made no progress; after DEPENETRATION_STALL_ROUNDS such rounds in a row the
# controller gives up on that capsule for the move (it does not fit where it is: pushing it
# out of one wall pushes it into the other). Converging recoveries shrink the depth to ~0 in
# one round; the stalls measured on the benchmark levels repeat the same depth round after
# round. Two rounds were too few: a capsule pushed up a ramp got deeper twice, then came out.
DEPENETRATION_STALL_RATIO = 0.9
DEPENETRATION_STALL_ROUNDS = 3

# Walk-through verdicts (core/walk/walkthrough.py).
# A frame counts as blocked when the character advanced less than this fraction of the
# desired horizontal step toward its target.
BLOCKED_PROGRESS_FRACTION = 0.5
# Seconds a character must stay blocked before the reason is reported: a one-frame stall on a
# stair nosing is not a verdict (test_walkthrough: same verdicts at 30, 60 and 120 Hz).
BLOCKED_SECONDS = 0.1
# Seconds without STUCK_MIN_PROGRESS metres of progress along the path before `stuck`.
STUCK_SECONDS = 1.0
STUCK_MIN_PROGRESS = 0.05
# Metres below the mesh's lowest point at which a falling character has left the level.
FALL_OUT_OF_WORLD = 10.0
# Extra walk time, seconds, in the default max_time = 3 * length / speed + WALK_TIME_SLACK.
WALK_TIME_SLACK = 2.0

# Dimensionless: sin^2 of the angle between two segments below which core.closest treats them as
# parallel (and picks the midpoint of their overlap). At sin^2 <= 1e-30 (sin <= 1e-15, a few
# float64 ulps) any pair on the overlap is within ~1e-15 * length of the true minimum, so the
# choice only makes the answer deterministic and symmetric; above it the cross-product formula is
# accurate (error ~ eps * length). Pinned by
# tests/core/test_closest.py::test_nearly_parallel_segments.
PARALLEL_SIN2 = 1e-30

# Dimensionless: (distance / scale)^2 below which the vector between the closest points of a
# capsule's segment and an obstacle is float64 rounding noise (scale = size of the local
# configuration), so core.contact treats the segment as touching/crossing the obstacle and pushes
# out along the triangle normal (or the segments' common perpendicular) instead.
# The closest-point vector errs by a few ulps of the scale (~2e-16 each), so its direction is
# off by ~k * 2e-16 / (distance / scale) rad: at 1e-10 relative distance (1e-20 squared) by
# ~2e-6 rad, far inside the push-out's needs (and a contact point off the capsule's surface by
# r * theta^2 / 2 ~ 2e-12 r). Was 1e-24: at 1e-12 relative distance the direction was off by
# up to ~2e-4 rad (1.46e-4 measured on two crossing capsules 10 km out, whose contact point
# then sat 1.04e-9 m inside a 0.097 m capsule; the hypothesis case of
# tests/core/test_contact.py::test_capsule_capsule_matches_oracle_symmetric_and_separates).
CONTACT_DIRECTION_REL2 = 1e-20

# Relative to the capsule radius (dimensionless). Swept tests (geometry/sweep.py): an entry whose
# deepest penetration would be shallower than SWEEP_GRAZE_REL * radius is grazing, not a hit
# (touching, grazing and sliding along a surface are misses by definition, and float rounding
# of a tangent motion must not turn them into hits). Also the relative slack of "starts
# penetrating": distance < radius * (1 - SWEEP_GRAZE_REL). 1e-10 * 0.35 m = 3.5e-11 m, far
# above the rounding of tangency tests (~1e-16 relative) and far below anything physical.
# Pinned by tests/core/test_sweep.py::test_sliding_and_grazing_are_not_hits.
SWEEP_GRAZE_REL = 1e-10

# Dimensionless, relative squared. A Minkowski face of the swept capsule-triangle test
# (triangle face, or edge x segment parallelogram) whose width w satisfies
# w**2 <= SWEEP_THIN_REL2 * radius**2 is skipped: its edges' cylinders cover it and the
# first entry is then late by at most a depth of w**2 / (8 * radius) <= 1.25e-12 * radius,
# whereas the unit normal of such a sliver has a rounding error of ~1e-16 / sin(angle).
SWEEP_THIN_REL2 = 1e-11
# Metres. A riser or tread measured by the step rays may exceed step_height by this much and
# still be climbed (float rounding of the ray distance; far below any modelled riser).
STEP_RISE_TOL = 1e-6
# Barycentric margin for the controller's same-face shortcut (a character moving parallel to
# the face it rests on skips the ground probe while its support point stays this far inside
# the triangle); near edges the probe runs. Dimensionless.
SAME_FACE_MARGIN = 1e-6

# Batched sweeps (core/mesh/sweeps.py): above SWEEP_PRUNE_MIN_PAIRS candidate pairs
# the exact kernel runs in two rounds, first on each query's SWEEP_PRUNE_FIRST most promising
# pairs, whose exact times then prune the pairs that provably enter later. Counts, not
# tolerances: they only trade kernel calls (~0.2 ms each) against pairs evaluated; answers
# do not depend on them. On terrain_1M 1, 2 and 4 first pairs leave 86k, 82k and 74k kernel
# pairs of 250k (offline count); 2 chosen, not tuned further. Since the exact mid-motion cull
# (SWEEP_SHORT_REL) a 256-character frame batch keeps ~770 pairs, where the second kernel
# call costs more than the ~27 % of pairs it saves (kernel time 0.44 s -> 0.33 s over the
# bench walk's batches with one call): 4096 (was 256).
SWEEP_PRUNE_FIRST = 2
SWEEP_PRUNE_MIN_PAIRS = 4096
# Batches of short sweeps only (the controller's) prune from this many candidate pairs on,
# ranking on the exact mid-motion tangent bound (core/mesh/culls.py),
# which is tight for a ground probe meeting the floor: ~7 triangles hit per probe on
# terrain_1M, ~1.5 evaluated. A count, not a tolerance.
SWEEP_LOWER_PRUNE_MIN_PAIRS = 256
# Dimensionless, |displacement| / radius. Batched sweeps at most this long get the exact
# mid-motion distance cull (core/mesh/culls.py): a static capsule of
# radius r + |v| / 2 around the segment shifted by v / 2 covers the whole swept volume, a
# tight bound while |v| is small against r. Longer sweeps skip it, and take the bounding-disc
# cull after the windows instead of before. Only trades cull work against kernel pairs;
# answers do not depend on it. On the terrain_1M 256-character walk (all sweeps short) the
# batched sweeps went 47k -> 64k+ sweeps/s; tools/bench.py's sweep row (16 % short) alike.
SWEEP_SHORT_REL = 1.0
# Pairs per chunk of the batched sweep cull (core/mesh/triangle_mesh.py ``_sweep_windows``): its
# component-major temporaries (~50 rows of 8-byte floats) stay in cache.
SWEEP_CULL_CHUNK = 4096
# Pairs per chunk of the batched capsule-contact cull (core/mesh/culls.py):
# component-major temporaries of ~20 rows stay in cache (8192 measured ~1.7x faster than
# unchunked on terrain_1M; 4096-16384 alike). A count, not a tolerance.
CAPSULE_CULL_CHUNK = 8192

# Batches of at most this many sweeps take the lean per-query route in TriangleMesh
# (_sweep_few: per-query BVH entry-level query and plane-slab reject, one kernel call for all
# pairs) instead of the batched windows/pruning route, which pays off only for many queries.
# A controller's slide sweep + ground probe is a batch of 2.
SWEEP_FEW_QUERIES = 4
# Metres. walkthrough_many keeps each character's candidate triangles for a region this much
# larger, on every side, than the box one frame's move can sweep (core/controller/controller.py
# ``_HoodCache``), and re-queries the mesh's hierarchy only when a frame leaves it. Trades
# candidates tested per sweep against hierarchy queries; answers do not depend on it.
HOOD_MARGIN = 0.4

# Dimensionless, relative squared width. A triangle whose normal n = (b - a) x (c - a)
# satisfies |n|^2 <= SLIVER_REL2 * e^4 (e its longest edge), i.e. whose width across its
# longest edge is at most 1e-10 e, is a sliver and every query treats it as the segment (or
# point) it nearly is: closest points, contacts and sweeps take the degenerate path (the union
# of its edges), rays skip it, classification calls it a WALL like a zero-area face.
# Derivation: a float64 cross product of edges no longer than e carries an absolute rounding
# error of |dn| <= 2 sqrt(3) eps e^2 ~ 7.7e-16 e^2 (two rounded products and a difference per
# component), so the unit normal of a triangle of relative width s = |n| / e^2 is only known
# to ~7.7e-16 / s rad: at s = 1e-10 to 7.7e-6 rad, below that it degrades to noise (at
# s ~ 1e-16, the cross product of a vertex computed "on" the line of the other two, it is
# pure rounding). Treating a triangle of width w = s e as its edges moves any distance by at
# most w / 2 = 5e-11 e (and by w^2 / (8 d) at distance d), far below CONTACT_SLOP for any
# level-sized triangle. A vertex authored on the line of two others lands off it by the
# rounding of its coordinates: relative ~1e-16 near the origin and ~1e-12 m absolute at 10 km,
# so such slivers of 1 cm and more are caught everywhere within 10 km.
# DEGENERATE_REL2 (1e-24, s = 1e-12) was the zero-area test of the mesh culls and the
# walkability classes but not of the kernels (which only took an exactly zero normal as
# degenerate); the sliver failures themselves came from the face-region test, whose edge
# half-plane rounding stretched a thin face along its line (the span guard in
# core/geometry/closest.py). Pinned by tests/core/test_slivers.py.
SLIVER_REL2 = 1e-20

# ------------------------------------------------------------ level sanity (core/checks/sanity.py)
# Dimensionless. "Wrong up axis" needs the area walkable along some other signed coordinate
# axis to exceed SANITY_UP_AREA_RATIO times the area walkable along up, and to be at least
# SANITY_UP_MIN_FRACTION of the level's area. A level the right way up has most walkable area
# along up; a room has as much ceiling as floor (ratio 1) and walls split over four axes, so
# 2 leaves margin; a Y-up export read as Z-up has ~0 walkable area along up.
SANITY_UP_AREA_RATIO = 2.0
SANITY_UP_MIN_FRACTION = 0.2
# Dimensionless. A level whose extent across another axis is at most this fraction of its
# extent along up, with at least as much floor-or-ceiling area across that axis, looks
# rotated: game levels are wider than tall (a Quake III map: ~3000 x 3000 x 800 units), and
# brush-built maps have walls on both sides of each brush, so floors alone do not outweigh the
# walls facing any one way (rule (a) misses them).
SANITY_FLAT_RATIO = 0.5
# Dimensionless. Rule (c) of a level on its side: risers (wall planes 5 cm to one step height
# tall: stair risers, kerbs, ledge lips) are a thing of gravity. On the four OpenArena maps
# (clip and render meshes, tests/core/test_sanity_real.py) the risers across Z take 0.09-0.88%
# of the area and those across X or Y at most a quarter of that, so SANITY_RISER_RATIO = 3
# times up's riser area across another axis (and at least SANITY_RISER_MIN_FRACTION of the
# level's area, with at least SANITY_RISER_ACROSS times up's floor-or-ceiling area across it:
# oa_koth1 on its side has 0.9 times, a floor with a few thin walls 0.2) says the level lies on
# its side, where the area rules (a) and (b) see boxes balanced every way.
SANITY_RISER_RATIO = 3.0
SANITY_RISER_MIN_FRACTION = 5e-4
SANITY_RISER_ACROSS = 0.5
SANITY_RISER_MIN_M = 0.05  # metres: lower wall planes are trims and seams, not risers
# Character heights. A level smaller than SANITY_MIN_EXTENT_HEIGHTS character heights across
# whose tallest wall is lower than SANITY_MIN_WALL_HEIGHTS of the character is 100 times too
# small (a metre level in a centimetre scene: OpenArena's 65-205 m maps become 0.6-2 m across,
# their tallest walls 0.3-0.6 m, their storeys 3-6 cm); a toy scene of a box a metre high has a
# wall as tall as half a character, a lone floor no wall, and neither is warned.
SANITY_MIN_EXTENT_HEIGHTS = 2.0
SANITY_MIN_WALL_HEIGHTS = 0.5
# Character heights. The area-weighted median height of a level's wall faces above this many
# character heights (90 m at 1.8 m) says centimetres: walls in a metre level are storeys and
# cliffs of 2-40 m, a centimetre level's doors (180-220) and storeys (300) are 100+.
SANITY_WALL_HEIGHTS = 50.0
# Metres. A level larger than this across is not in metres (game worlds are at most a few tens
# of kilometres across; 100 km is a 1 km level in centimetres).
SANITY_MAX_EXTENT = 1e5

# Dimensionless. A single capsule-triangle verdict (core.contact.sphere_triangle /
# capsule_triangle, and TriangleMesh's single-capsule queries through
# contact.settle_touching) is borderline when |radius - float distance| is at most
# EXACT_TIE_REL times the largest of the coordinates' magnitude, the local size and the
# radius; core.exact (rational arithmetic) then decides. The float distance is accurate to a
# few tens of ulps of those (~16 eps = 3.6e-15 relative, tests/core/test_closest.py), so 1e-13
# (~450 ulps) holds every case float rounding can flip and costs one exact call (~0.1-1 ms)
# only for capsules placed within 1e-13 relative of touching. Pinned by
# tests/core/test_exact.py::test_single_capsule_verdicts_at_the_touching_boundary_are_exact.
EXACT_TIE_REL = 1e-13

# ---------------------------------------------------------------- standable map and reachability
# (core/audits/standable.py, core/reachability.py)
# Dimensionless: the standable map's cell side as a fraction of the capsule radius (the issue
# asks for at most radius / 2). At 0.35 m that is 0.175 m cells: a cramped strip, slot or
# corner of one cell (3 cm^2 of floor) is resolved; 1M triangles of 0.25 m terrain are ~1M
# cells.
STANDABLE_CELL_FRACTION = 0.5
# Metres. Two walkable faces crossing one cell centre within this height of each other are
# one floor there (duplicated or coincident faces): one span, the lower face index.
COINCIDENT_SPAN = 1e-6
# Push-out of a blocked cell (core/audits/spans.py): at most PUSH_ROUNDS rounds; each adds
# the horizontal planes of the PUSH_PLANES deepest blocking contacts (n_h . x >= depth +
# PUSH_SLOP) and solves every plane met so far for the smallest horizontal push
# (core.planes.solve_planes); the push is at most one cell. A contact whose normal has less than
# PUSH_MIN_HORIZONTAL horizontal part (a ceiling, a plate overhead) cannot be cleared by a
# horizontal push within reach (the push would exceed depth / 0.25 = 4 x depth) and keeps the
# cell blocked. PUSH_SLOP (metres) takes the pushed capsule strictly off the contact, above
# float rounding of the depth at 10 km, far below a cell. Two rounds settle a strip (both
# walls at once) and a corner (one push per wall); pinned by tests/test_standable.py (0.8 m
# strips between pillars are standable).
PUSH_ROUNDS = 2
PUSH_PLANES = 4
PUSH_MIN_HORIZONTAL = 0.25
PUSH_SLOP = 1e-6

# --------------------------------------------------------- walk-throughs (core/walk/walker.py)
# Seconds. Time thresholds (blocked for BLOCKED_SECONDS, no progress for STUCK_SECONDS)
# are compared with this slack, so that k frames of dt reaching the threshold count even
# when k * dt rounds a hair below it (0.1 s = 6 frames at 60 Hz).
TIME_TOL = 1e-9
# Metres. A desired step shorter than this (the goal reached within rounding) is never
# "blocked".
MIN_WANTED_STEP = 1e-9

# ------------------------------------------------------------- mesh culls (core/mesh/culls.py)
# Relative slack of the tangent cull's slope f'(1/2), times |v|: far above the slope's
# rounding (the closest-point difference W errs by ~1e-16 of the coordinates, the pad's
# margin by MESH_CULL_REL of them), far below a slope that matters.
TANGENT_SLOPE_SLACK = 1e-6

# ---------------------------------------------------- walkability (core/checks/walkability.py)
# Fast classification: the mesh's stored unit normals (the same edge cross product, the same
# SLIVER_REL2 test, zero for degenerate faces) decide a face's class from cos(theta) = n . up,
# except within CLASSIFY_COS_MARGIN of a class boundary's cosine, where the exact atan2 angle
# decides. Rounding of the normalisation and of the dot product is ~1e-16, far below the
# margin, so the classes are those of the exact angle (tests/core/test_walkability.py pins it on
# float32 ramps at the limit, random soups and slivers) without an arctan over every face.
CLASSIFY_COS_MARGIN = 1e-9

# ---------------------------------------------------------------- audits (core/checks/audits/)
# Cosine and metres: two faces are one polygon's triangles (the ledge audit's boundary
# edges) when their normals are this close and the other face's vertices lie this near the
# plane; rounding of a triangulated polygon's normals stays far inside both.
COPLANAR_COS = 1.0 - 1e-9
COPLANAR_DIST = 1e-6
# Metres added to every reach and height bound of the open-ground screen (the rounding of
# the horizontal frame it projects into): a face near a bound goes to the mesh query.
SCREEN_SLACK = 1e-6
# Metres: two riser triangles touch when corners coincide to this (rounded onto a grid of
# it): far above float32 rounding of a welded or duplicated vertex within 100 m (3.8e-6 m),
# far below any gap between two staircases.
STAIR_CORNER_TOL = 1e-4

# --------------------------------------------------- plane solvers (core/controller/planes.py)
# Metres. A clipped displacement rising more than this above what the motion itself asked
# for climbs a steep slope (float noise of the clip stays far below it).
CLIMB_TOL = 1e-12
# Metres (a dot product of a displacement with a unit normal): a crease clip runs when the
# clipped motion still moves into an earlier plane by more than this (noise stays below).
CREASE_VIOLATION = 1e-12
# |n1 x n2| below which two planes are parallel: no crease line, project onto the plane.
CREASE_MIN_SIN = 1e-9
# Metres: after the crease clips, motion still into an earlier plane by more than this is a
# corner (three or more planes): the character stops.
CORNER_VIOLATION = 1e-9

# ------------------------------------------------------------ slide (core/controller/slide.py)
# Cosine. A hit approached this obliquely or less backs off skin / MIN_APPROACH_COS at most
# (the skin is measured along the contact normal: skin / approach along the motion).
MIN_APPROACH_COS = 1e-6
# Up component of a ground normal below which ground-following does not divide by it
# (a vertical "ground" normal cannot carry a step; it is never walkable anyway).
MIN_UP_COS = 1e-9
# Length of the horizontal part of a contact normal below which it has no horizontal
# direction (a flat floor or ceiling is never a blocking wall).
MIN_HORIZONTAL = 1e-9

# ---------------------------------------------- the controller (core/controller/controller.py)
# Metres. A step-up refused at a blocking triangle is not tried again while the character
# keeps pushing into the same triangle and its slide ends within this distance of where it
# ended when the step was refused (a character blocked head-on ends each frame at the same
# place): the retry would measure the same riser. Moving farther, or meeting another
# triangle, tries again. Far below any geometry a step verdict depends on.
STEP_RETRY_MOVE = 1e-4

# ---------------------------------------------------------- verdicts (core/checks/verdicts.py)
# Metres: contacts shallower than this are reported as clear, by the live check, Check
# Penetration and the CLI alike (core.checks.verdicts). A capsule snapped onto a floor
# touches it exactly, and float rounding of foot + radius (float32 in Blender) can turn that
# into a 1e-7 m "penetration"; no designer means that. 1e-6 m is far below anything visible
# and far above float64 noise at level scale. Pinned by
# tests/core/test_verdicts.py::test_min_depth_boundary.
MIN_REPORTED_DEPTH = 1e-6

# From this many triangles a build runs its independent parts in two threads (numpy releases
# the GIL in array work): the mesh's BVH and kernel records, the standable map's raster.
# Below it a thread pool's start (about 1 ms) costs more than it saves. Not a tolerance:
# the threads compute the same arrays, bit for bit.
THREADED_BUILD_TRIANGLES = 50_000

# ---------------------------------------------------------------- collision authoring
# (core/authoring/: proxies from render meshes, stair ramps)
# Relative to the squared extent of the points: a 2-D hull corner whose cross product with
# its neighbours is below this is collinear and dropped (a box's edge midpoints are no
# corners). 1e-12 relative squared = 1e-6 relative length, far above float64 rounding.
HULL_COLLINEAR_REL = 1e-12
# Metres: a vertex this far outside a face's plane still counts as on the convex side
# (Blender stores float32 positions: 100 m away they round by ~4e-6 m).
CONVEX_TOL = 1e-5

# ------------------------------- render against collision (core/checks/collision_diff.py)
# Metres a collision floor may lie above or below the render floor under a standing character
# before it is floating / sunk: the default of 3 cm, below what a player notices at
# the feet, above the centimetre a clip brush is often offset by. A setting
# (``collision_diff(..., tolerance=)``).
COLLISION_DIFF_TOLERANCE = 0.03
# Metres the capsule may overlap the other mesh before it is an invisible wall or a wall the
# character walks through: a stair ramp along the nosings has sides a few centimetres above
# the flight's stepped sides (3.4 cm for 0.17 m risers beside the flight's foot), which no
# player notices; a crate or a wall is tens of centimetres. Pinned by
# tests/core/test_collision_diff.py::test_stair_ramp_gives_no_hole_or_wall.
COLLISION_DIFF_WALL_TOLERANCE = 0.05
# Metres a capsule is thinned beyond the tolerance (clear of what it grazes) when
# collision_diff tests whether it is blocked.
DIFF_SLOP = 1e-4
# Metres two stand points may differ and be the same place (float noise of two builds of
# the same floor; far below the tolerances): such spans are not let down again.
STAND_MATCH = 1e-4
# Metres a piece of a line of sight reaches past its end (reach_explain.sight_blocked casts
# a long line in pieces): a hit on the seam of two pieces is met by the first; far above
# float64 noise at 10 km (2e-12 m), far below anything a target point's lift resolves.
SIGHT_PIECE_OVERLAP = 1e-6
