"""The one compiled part: observe.parse._scanc, the byte scan's line classifier.

Optional: where it cannot be built (no C compiler), the install goes on without it and
observe.parse.scan uses its pure-Python classifier, which gives the same runs (tests/test_scanc.py).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "observe.parse._scanc",
            sources=["observe/parse/_scanc.c"],
            optional=True,
            extra_compile_args=["-O3"],
        )
    ]
)
