"""Variants of Keras crash classes: inputs whose last axis the first Dense layer cannot take, targets
shaped unlike the output, samples that do not pair up, models used before compile(), removed methods,
keyword arguments Keras 3 no longer recognizes."""

from __future__ import annotations

from variants import Spec, State

COMMON = (
    "import os\nos.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')\nimport numpy as np\nimport "
    "keras\nfrom keras import layers"
)
NAMINGS = [
    {"m": "model", "X": "X_train", "y": "y_train", "n": "64"},
    {"m": "net", "X": "features", "y": "labels", "n": "16"},
]


def model(
    inputs: int, outputs: int = 3, activation: str = "softmax", compiled: str = "categorical_crossentropy"
) -> str:
    build = (
        f"$m = keras.Sequential([keras.Input(shape=({inputs},)), layers.Dense(8, activation='relu'), "
        f"layers.Dense({outputs}, activation='{activation}')])"
    )
    return build + (f"\n$m.compile(optimizer='adam', loss='{compiled}')" if compiled else "")


SPECS = [
    Spec(
        rule="shape-mismatch",
        generator="keras-input-width",
        common=COMMON,
        states=[
            State(
                "wider",
                model(10) + "\n$X = np.zeros(($n, 12))\n$y = np.eye(3)[np.arange($n) % 3]",
                crash=True,
            ),
            State(
                "fits",
                model(10) + "\n$X = np.zeros(($n, 10))\n$y = np.eye(3)[np.arange($n) % 3]",
                crash=False,
            ),
        ],
        forms=[
            "$m.predict($X, verbose=0)",
            "$m.fit($X, $y, epochs=1, verbose=0)",
            "$m.evaluate($X, $y, verbose=0)",
        ],
        namings=NAMINGS,
        per_side=24,
    ),
    Spec(
        rule="shape-mismatch",
        generator="keras-target-shape",
        common=COMMON,
        states=[
            State(
                "sparse-labels",
                model(4) + "\n$X = np.zeros(($n, 4))\n$y = np.eye(5)[np.arange($n) % 5]",
                crash=True,
            ),
            State(
                "one-hot-fits",
                model(4) + "\n$X = np.zeros(($n, 4))\n$y = np.eye(3)[np.arange($n) % 3]",
                crash=False,
            ),
        ],
        forms=[
            "$m.fit($X, $y, epochs=1, verbose=0)",
            "hist = $m.fit($X, $y, epochs=1, batch_size=8, verbose=0)",
            "$m.evaluate($X, $y, verbose=0)",
        ],
        namings=NAMINGS,
        per_side=24,
    ),
    Spec(
        rule="not-compiled",
        generator="keras-not-compiled",
        common=COMMON,
        states=[
            State(
                "never",
                model(4, compiled="") + "\n$X = np.zeros(($n, 4))\n$y = np.eye(3)[np.arange($n) % 3]",
                crash=True,
            ),
            State(
                "compiled",
                model(4) + "\n$X = np.zeros(($n, 4))\n$y = np.eye(3)[np.arange($n) % 3]",
                crash=False,
            ),
        ],
        forms=[
            "$m.fit($X, $y, epochs=1, verbose=0)",
            "$m.evaluate($X, $y, verbose=0)",
            "history = $m.fit($X, $y, epochs=1, verbose=0)\nhistory.history['loss']",
        ],
        namings=NAMINGS,
        per_side=24,
    ),
    Spec(
        rule="not-compiled",
        generator="keras-built-here",
        common=COMMON,
        states=[State("data", "$X = np.zeros(($n, 4))\n$y = np.eye(3)[np.arange($n) % 3]", crash=True)],
        forms=[
            "$m = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(3, activation='softmax')])\n"
            "$m.fit($X, $y, verbose=0)",
            "from keras.models import Sequential\n$m = Sequential([keras.Input(shape=(4,)), "
            "layers.Dense(3)])\n$m.summary()\n$m.fit($X, $y, epochs=1, verbose=0)",
            (
                "$m = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(3, activation='softmax')])\n"
                "$m.compile(optimizer='adam', loss='categorical_crossentropy')\n$m.fit($X, $y, verbose=0)",
                False,
            ),
        ],
        namings=NAMINGS,
        per_side=24,
    ),
    Spec(
        rule="missing-attribute",
        generator="keras-removed-method",
        common=COMMON,
        states=[State("model", model(4) + "\n$X = np.zeros(($n, 4))", crash=True)],
        forms=[
            "$m.predict_classes($X)",
            "$m.fit_generator(iter([]))",
            "classes = $m.predict_classes($X)\nclasses[:5]",
            ("$m.predict($X, verbose=0).argmax(axis=1)", False),
            ("$m.count_params()", False),
        ],
        namings=NAMINGS,
        per_side=24,
    ),
    Spec(
        rule="bad-arguments",
        generator="keras-unrecognized-keywords",
        common=COMMON,
        states=[State("keras", "", crash=True)],
        forms=[
            "keras.optimizers.Adam(lr=1e-3)",
            "opt = keras.optimizers.SGD(lr=0.01, momentum=0.9)",
            "layers.Dense(16, init='uniform')",
            "layers.Dropout(p=0.5)",
            ("keras.optimizers.Adam(learning_rate=1e-3)", False),
            ("layers.Dense(16, input_dim=4)", False),
            ("layers.Dropout(rate=0.5)", False),
            ("keras.optimizers.Adam(decay=1e-4)", False),
        ],
        namings=NAMINGS,
        per_side=24,
    ),
    Spec(
        rule="shape-mismatch",
        generator="keras-sparse-one-hot",
        common=COMMON,
        states=[
            State(
                "one-hot",
                model(4, compiled="sparse_categorical_crossentropy")
                + "\n$X = np.zeros(($n, 4))\n$y = keras.utils.to_categorical(np.arange($n) % 3, 3)",
                crash=True,
            ),
            State(
                "one-hot-object-loss",
                model(4, compiled="")
                + "\n$m.compile(optimizer='adam', loss=keras.losses.SparseCategoricalCrossentropy())"
                "\n$X = np.zeros(($n, 4))\n$y = np.eye(3)[np.arange($n) % 3]",
                crash=True,
            ),
            State(
                "class-ids",
                model(4, compiled="sparse_categorical_crossentropy")
                + "\n$X = np.zeros(($n, 4))\n$y = np.arange($n) % 3",
                crash=False,
            ),
            State(
                "class-id-column",
                model(4, compiled="sparse_categorical_crossentropy")
                + "\n$X = np.zeros(($n, 4))\n$y = (np.arange($n) % 3).reshape(-1, 1)",
                crash=False,
            ),
        ],
        forms=[
            "$m.fit($X, $y, epochs=1, verbose=0)",
            "hist = $m.fit($X, $y, epochs=1, batch_size=8, verbose=0)",
            "$m.evaluate($X, $y, verbose=0)",
        ],
        namings=NAMINGS,
        per_side=24,
    ),
    Spec(
        rule="shape-mismatch",
        generator="keras-conv-channels",
        common=COMMON,
        states=[
            State(
                "grayscale",
                "$m = keras.Sequential([keras.Input(shape=(16, 16, 3)), layers.Conv2D(4, 3), "
                "layers.GlobalAveragePooling2D(), layers.Dense(2, activation='softmax')])\n"
                "$m.compile(optimizer='adam', loss='sparse_categorical_crossentropy')\n"
                "$X = np.zeros(($n, 16, 16, 1), dtype='float32')\n$y = np.arange($n) % 2",
                crash=True,
            ),
            State(
                "rgba",
                "$m = keras.Sequential([keras.Input(shape=(16, 16, 3)), layers.Conv2D(4, 3, padding='same'), "
                "layers.Flatten(), layers.Dense(2, activation='softmax')])\n"
                "$m.compile(optimizer='adam', loss='sparse_categorical_crossentropy')\n"
                "$X = np.zeros(($n, 16, 16, 4), dtype='float32')\n$y = np.arange($n) % 2",
                crash=True,
            ),
            State(
                "rgb",
                "$m = keras.Sequential([keras.Input(shape=(16, 16, 3)), layers.Conv2D(4, 3), "
                "layers.GlobalAveragePooling2D(), layers.Dense(2, activation='softmax')])\n"
                "$m.compile(optimizer='adam', loss='sparse_categorical_crossentropy')\n"
                "$X = np.zeros(($n, 16, 16, 3), dtype='float32')\n$y = np.arange($n) % 2",
                crash=False,
            ),
        ],
        forms=[
            "$m.fit($X, $y, epochs=1, verbose=0)",
            "$m.predict($X, verbose=0)",
            "hist = $m.fit($X, $y, epochs=1, batch_size=8, verbose=0)",
        ],
        namings=NAMINGS,
        per_side=24,
    ),
]
