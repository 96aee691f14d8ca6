"""The desktop form (PySide6): ``gpu-tco form`` or ``python -m gpu_tco.gui``.

Views (``window``, ``charts``) apart from the controller (``controller``: state, validation
messages, recompute scheduling) and the Qt-free state and answer (``model``).  No formula and no
ranking rule lives here: everything shown is computed by ``gpu_tco.core``.
"""
