"""Named tolerances. Every epsilon in ``core`` comes from here, with its unit and reason.

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
