"""ARGESIM C21 bouncing ball without air resistance (beta = 0), built with blocksim's Python
builder (diagrams/bouncing_ball.json is the same model with drag): prints the first five
bounce times, one per line. Closed form: t_n = t1 (2 (1 - mu^n) / (1 - mu) - 1)."""
import blocksim

d = blocksim.DiagramBuilder(stop=12, rtol=1e-10, atol=1e-10, output_interval=0.01,
                            parameters={"x0": 10.0, "v0": 0.0, "g": 9.81, "mu": 0.9})
gravity = d.add("Constant", id="gravity", value="-g")
velocity = d.add("ResetIntegrator", id="velocity", initial="v0", edge="falling")
restitution = d.add("Gain", id="restitution", k="-mu")
position = d.add("Integrator", id="position", x0="x0", lower=0)  # the floor stops x at 0
gravity.y >> velocity.u
position.sat >> velocity.reset  # sat falls to -1 at the floor: v jumps to -mu v
velocity.state >> restitution.u >> velocity.x0
velocity.y >> position.u
position.y >> d.add("Scope", id="x").u
velocity.y >> d.add("Scope", id="v").u

for bounce in d.simulate().events_of("reset")[:5]:
    print(repr(bounce.time))
