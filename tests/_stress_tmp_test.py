import math, numpy as np
from hypothesis import given, settings, strategies as st, HealthCheck
import tests.test_expressions as T
from blocksim.expressions import *

@settings(max_examples=20000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(T.FORMULAS), st.one_of(st.floats(-1e6, 1e6), T.finite), st.one_of(st.floats(-1e6, 1e6), T.finite))
def test_agree(f, x, y):
    T.test_generated_code_agrees_with_evaluate.hypothesis.inner_test(f, x, y)

@settings(max_examples=20000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(st.text(max_size=60), st.text(T.EXPRESSION_CHARS + "[]ab,0.5", max_size=60)))
def test_random(t):
    T.test_random_text_only_raises_expression_error.hypothesis.inner_test(t)
