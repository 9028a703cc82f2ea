"""Example plug-ins for bakers-dozen (load with --strategy examples.MODULE:Class)."""
