"""The canvas and its wires: scene, items, view, mouse gestures, edit operations, wire routing (Qt-free: geometry, portinfo, routing, pathfind, routecheck, reroute, sampletimes)."""
