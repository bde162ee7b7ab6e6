"""Blender side of Capsule Collision: everything that touches bpy.

Contract: gather evaluated meshes as numpy arrays, call ``core``, write results back as data
(face attributes, objects, report rows). Imports inside the extension are relative.
"""
