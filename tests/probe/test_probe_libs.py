"""Per-library summarizers of the probe, on real objects (each test skips when its library is absent)."""

from __future__ import annotations

from typing import Any

import pytest
from probe_results import child, entry, facts, run


def modules(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["module"]: m for m in result["modules"]}


def assert_categories(e: dict[str, Any]) -> None:
    for f in e["facts"]:
        assert f["cat"] in ("S", "R", "V"), f
    for c in e["children"]:
        assert_categories(c)


# --------------------------------------------------------------------------------------------------
# numpy
# --------------------------------------------------------------------------------------------------


def test_ndarray_shape_dtype_nan_range_and_label_counts() -> None:
    np = pytest.importorskip("numpy")
    X = np.array([[1.0, np.nan], [3.0, 4.0]])
    y = np.array([0, 1, 1, 2, 2, 2])
    r = run("model.fit(X, y)", {"X": X, "y": y, "np": np})
    fx = facts(entry(r, "X"))
    assert fx["shape"] == [2, 2] and fx["dtype"] == "float64" and fx["nan"] == 1
    assert (fx["min"], fx["max"]) == (1.0, 4.0)
    fy = facts(entry(r, "y"))
    assert fy["unique"] == 3 and fy["kind"] == "few-valued"
    assert fy["counts"] == [[2, 3], [1, 2], [0, 1]]  # most frequent first: the smallest class is visible
    assert_categories(entry(r, "X"))


def test_removed_numpy_alias_is_reported_missing_with_numpys_message() -> None:
    np = pytest.importorskip("numpy")
    if hasattr(np, "float"):
        pytest.skip("this numpy still has np.float")
    r = run("x = np.float(3)", {"np": np})
    e = entry(r, "np.float")
    assert e["missing"] is True
    assert "float" in facts(e)["close"] or "float64" in facts(e)["close"]
    assert modules(r)["numpy"]["version"] == np.__version__


def test_a_name_a_library_wrapper_answers_itself_is_never_missing() -> None:
    """statsmodels' results wrappers delegate every name to the results they wrap through their own
    __getattribute__: no class defines `predict`, yet it is there (found by the sealed3 suite)."""
    np = pytest.importorskip("numpy")
    sm = pytest.importorskip("statsmodels.api")
    x = np.arange(20.0)
    model = sm.OLS(2 * x + 1, sm.add_constant(x)).fit()
    r = run("model.predict(model.model.exog)\nmodel.predictt()", {"model": model})
    assert entry(r, "model.predict")["missing"] is False
    assert "model.predictt" not in [e["expr"] for e in r["objects"] if e["missing"]]
    r = run("s.lowerr()", {"s": "text"})  # a builtin's own __getattribute__ still proves a name missing
    assert entry(r, "s.lowerr")["missing"] is True


def test_big_array_is_sampled() -> None:
    np = pytest.importorskip("numpy")
    a = np.zeros((3000, 1000), dtype=np.float32)
    a[5, 5] = np.nan
    r = run("a.mean()", {"a": a})
    f = facts(entry(r, "a"))
    assert f["sampled"] <= 200_000 and f["shape"] == [3000, 1000]


# --------------------------------------------------------------------------------------------------
# pandas
# --------------------------------------------------------------------------------------------------


def test_dataframe_columns_dtypes_nan_and_named_missing_column() -> None:
    pd = pytest.importorskip("pandas")
    np = pytest.importorskip("numpy")
    train = pd.DataFrame(
        {"PassengerId": [1, 2, 3, 4], " Age": [22.0, np.nan, 30.0, 41.0], "Sex": ["m", "f", "f", "m"]}
    )
    r = run('train["Age"] = train["Age"].fillna(0)\ntrain["Sex"].map({})', {"train": train})
    e = entry(r, "train")
    f = facts(e)
    assert f["shape"] == [4, 3] and f["columns"] == ["PassengerId", " Age", "Sex"]
    assert f["nan_columns"] == {" Age": 1}
    age = child(e, "train['Age']")
    assert age["missing"] is True and facts(age)["close"] == [" Age"]
    sex = child(e, "train['Sex']")
    assert sex.get("named") is True
    assert facts(sex)["counts"] == [["f", 2], ["m", 2]] and facts(sex)["dtype"] in ("object", "str")
    assert facts(child(e, "train[' Age']"))["nan"] == 1
    assert_categories(e)


def test_column_assigned_before_read_is_not_missing() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"zipcode": ["10001", "94110"], "price": [1.0, 2.0]})
    r = run('df["zip3"] = df["zipcode"].str[:3]\ndf.groupby("zip3")["price"].median()', {"df": df})
    kids = [c["expr"] for c in entry(r, "df")["children"]]
    assert "df['zip3']" not in kids
    assert child(entry(r, "df"), "df['zipcode']").get("named") is True


def test_merge_keys_are_checked_in_every_frame_with_their_dtypes() -> None:
    pd = pytest.importorskip("pandas")
    orders = pd.DataFrame({"order_id": [1, 2], "customer_id": [1, 2]})
    customers = pd.DataFrame({"customer_id": ["1", "2"], "segment": ["a", "b"]})
    r = run(
        'm = orders.merge(customers, on="customer_id", how="left")',
        {"orders": orders, "customers": customers},
    )
    left = facts(child(entry(r, "orders"), "orders['customer_id']"))
    right = facts(child(entry(r, "customers"), "customers['customer_id']"))
    assert left["dtype"] == "int64" and right["dtype"] in ("object", "str")
    assert not any(c["expr"].endswith("['left']") for c in entry(r, "orders")["children"])


def test_seaborn_style_data_and_column_keywords() -> None:
    pd = pytest.importorskip("pandas")
    train = pd.DataFrame({"age": [1.0, 2.0], "survived": [0, 1]})
    r = run('sns.histplot(data=train, x="Age", hue="survived", multiple="stack")', {"train": train})
    e = entry(r, "train")
    assert child(e, "train['Age']")["missing"] is True
    assert facts(child(e, "train['Age']"))["close"] == ["age"]
    assert child(e, "train['survived']")["missing"] is False
    assert not any("stack" in c["expr"] for c in e["children"])


def test_column_after_filter_or_groupby_is_checked_on_the_frame() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    r = run("df[df.a > 1]['c']\ndf.groupby('a')['d'].sum()", {"df": df})
    e = entry(r, "df")
    assert child(e, "df['c']")["missing"] and child(e, "df['d']")["missing"]


def test_series_value_counts_show_the_rarest_class() -> None:
    pd = pytest.importorskip("pandas")
    y = pd.Series(["a"] * 50 + ["b"] * 49 + ["b "], name="species")
    f = facts(entry(run("train_test_split(X, y, stratify=y)", {"y": y}), "y"))
    assert f["unique"] == 3 and f["counts"][-1] == ["b ", 1] and f["name"] == "species"


def test_few_integers_are_few_valued_and_only_a_category_dtype_is_categorical() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"rooms": [1, 2, 3, 2, 4, 3], "city": pd.Categorical(["a", "b", "c", "a", "b", "c"])})
    e = entry(run('df["rooms"].mean()\ndf["city"]', {"df": df}), "df")
    assert facts(child(e, "df['rooms']"))["kind"] == "few-valued"
    assert facts(child(e, "df['city']"))["kind"] == "categorical"


def test_all_nan_column_is_flagged() -> None:
    pd = pytest.importorskip("pandas")
    np = pytest.importorskip("numpy")
    X = pd.DataFrame({"Sex": [np.nan] * 4, "Fare": [1.0, 2.0, 3.0, 4.0]})
    f = facts(child(entry(run("clf.fit(X, y)", {"X": X}), "X"), "X['Sex']"))
    assert f["nan"] == 4 and f["kind"] == "all-nan"


def test_wide_frame_keeps_max_columns_plus_named_ones() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({f"c{i}": [i] for i in range(50)})
    r = run("df['c45']", {"df": df}, max_columns=5)
    e = entry(r, "df")
    assert [c["expr"] for c in e["children"]] == [f"df['c{i}']" for i in (0, 1, 2, 3, 4, 45)]
    assert facts(e)["columns_left_out"] == 44
    assert len(facts(e)["columns"]) == 50


def test_huge_frame_and_tensor_are_sampled_not_scanned() -> None:
    """A 5,000,000 x 40 frame and a 1 GB tensor in scope: facts come from a sample. The cost goal
    (<= 250 ms) is measured by `crane-bench speed --scenarios big`, not asserted here."""
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.random((5_000_000, 40), dtype=np.float32), columns=[f"c{i}" for i in range(40)])
    df.iloc[::1000, 3] = np.nan
    t = torch.zeros((256, 1024, 1024))
    r = run("df['c3'].mean()\nt.sum()", {"df": df, "t": t})
    f = facts(entry(r, "df"))
    assert f["sampled"] == 50_000 and f["nan_columns"]["c3"] > 0
    assert facts(entry(r, "t"))["shape"] == [256, 1024, 1024]


# --------------------------------------------------------------------------------------------------
# torch
# --------------------------------------------------------------------------------------------------


def test_tensor_facts_and_grad_mode() -> None:
    torch = pytest.importorskip("torch")
    y = torch.tensor([1, 2, 5, 5])
    X = torch.ones((4, 3), dtype=torch.float64, requires_grad=True)
    r = run("loss = criterion(model(X), y)", {"X": X, "y": y, "torch": torch})
    fy = facts(entry(r, "y"))
    assert (fy["min"], fy["max"], fy["dtype"]) == (1, 5, "int64")
    fx = facts(entry(r, "X"))
    assert fx["dtype"] == "float64" and fx["requires_grad"] is True and fx["device"] == "cpu"
    torch_mod = modules(r)["torch"]
    assert torch_mod["facts"][0] == {"cat": "V", "key": "grad_enabled", "value": torch.is_grad_enabled()}


def test_nn_module_layers_and_addressable_submodules() -> None:
    torch = pytest.importorskip("torch")
    nn = torch.nn

    class CNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 16, 3)
            self.fc = nn.Linear(16, 5)

    seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 5))
    r = run("model(x)\nmodel.conv1.in_channels\nseq[0].weight\nseq[-1]", {"model": CNN(), "seq": seq})
    m = entry(r, "model")
    f = facts(m)
    assert f["class"] == "CNN" and f["training"] is True and f["param_dtype"] == "float32"
    assert f["last_out_features"] == 5
    assert facts(child(m, "model.conv1"))["in_channels"] == 3
    assert facts(entry(r, "model.conv1"))["in_channels"] == 3
    assert facts(entry(r, "model.conv1.in_channels"))["value"] == 3
    assert facts(entry(r, "seq[-1]"))["out_features"] == 5
    assert facts(entry(r, "seq[0].weight"))["dtype"] == "float32"
    assert facts(child(entry(r, "seq"), "seq[0]"))["in_features"] == 4


def test_dataloader_is_described_without_iterating() -> None:
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader, Dataset

    calls = {"iter": 0, "getitem": 0}

    class Counting(DataLoader):  # type: ignore[type-arg]
        def __iter__(self) -> Any:
            calls["iter"] += 1
            return super().__iter__()

    class Images(Dataset):  # type: ignore[type-arg]
        def __len__(self) -> int:
            return 100

        def __getitem__(self, i: int) -> Any:
            calls["getitem"] += 1
            return torch.zeros(3, 8 + (i % 2), 8), i % 3

    loader = Counting(Images(), batch_size=16, shuffle=True, drop_last=True)
    r = run("for xb, yb in loader:\n    pass", {"loader": loader}, probe_samples=4)
    e = entry(r, "loader")
    f = facts(e)
    assert calls["iter"] == 0
    assert f["batch_size"] == 16 and f["drop_last"] is True and f["shuffle"] is True
    ds = facts(e["children"][0])
    assert ds["len"] == 100
    assert calls["getitem"] == 4  # probe_samples samples of the map-style dataset, nothing more
    assert ds["sample_shapes"] == [[[3, 8, 8], "int"], [[3, 9, 8], "int"]]
    assert ds["labels"] == [0, 1, 2]
    assert "batch_shape" not in ds  # varying shapes: the default collate would fail


def test_iterable_dataset_is_not_iterated() -> None:
    torch = pytest.importorskip("torch")
    from torch.utils.data import IterableDataset

    class Stream(IterableDataset):  # type: ignore[type-arg]
        def __iter__(self) -> Any:
            raise AssertionError("iterated")

    r = run("for b in stream: pass", {"stream": Stream(), "torch": torch})
    assert "not iterated" in facts(entry(r, "stream"))["note"]


# --------------------------------------------------------------------------------------------------
# tensorflow / keras
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def keras() -> Any:
    return pytest.importorskip("keras")


def test_keras_model_shapes_loss_and_missing_method(keras: Any) -> None:
    model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    r = run("model.predict_classes(X)", {"model": model, "keras": keras})
    f = facts(entry(r, "model"))
    assert f["output_shape"] == [None, 3] and f["input_shape"] == [None, 4]
    assert f["last_units"] == 3 and f["last_activation"] == "softmax"
    assert f["loss"] == "sparse_categorical_crossentropy" and f["compiled"] is True
    missing = entry(r, "model.predict_classes")
    assert missing["missing"] is True and "predict" in facts(missing)["close"]
    assert modules(r)["keras"]["version"] == keras.__version__


def test_tf_dataset_is_not_iterated(keras: Any) -> None:
    tf = pytest.importorskip("tensorflow")
    ds = tf.data.Dataset.from_tensor_slices(tf.zeros((10, 2))).batch(4)
    r = run("model.fit(ds)", {"ds": ds})
    f = facts(entry(r, "ds"))
    assert f["cardinality"] == 3 and "TensorSpec" in f["element_spec"]


def test_keras_py_dataset_attributes(keras: Any) -> None:
    np = pytest.importorskip("numpy")

    class Gen(keras.utils.PyDataset):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.num_classes = 2
            self.images = np.zeros((8, 4, 4, 3), dtype=np.float32)

        def __len__(self) -> int:
            raise AssertionError("len called")

        def __getitem__(self, i: int) -> Any:
            raise AssertionError("item called")

    r = run("model.fit(train_gen)", {"train_gen": Gen()})
    attrs = facts(entry(r, "train_gen"))["attrs"]
    assert attrs["num_classes"] == 2 and "(8, 4, 4, 3)" in attrs["images"]


# --------------------------------------------------------------------------------------------------
# scikit-learn, scipy, PIL, matplotlib
# --------------------------------------------------------------------------------------------------


def test_estimator_fitted_state_and_features() -> None:
    np = pytest.importorskip("numpy")
    pytest.importorskip("sklearn")
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import LabelEncoder, StandardScaler

    X = np.random.default_rng(0).random((20, 3))
    y = np.array([0, 1] * 10)
    fitted = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    le = LabelEncoder().fit(["a", "b", "c"])
    ns = {"pipe": fitted, "clf": LogisticRegression(C=0.5), "le": le}
    r = run("pipe.predict(X)\nclf.predict(X)\nle.transform(['d'])", ns)
    fp = facts(entry(r, "pipe"))
    assert fp["fitted"] is True and fp["n_features_in_"] == 3 and fp["classes_"] == [0, 1]
    assert fp["steps"] == ["standardscaler=StandardScaler", "logisticregression=LogisticRegression"]
    fc = facts(entry(r, "clf"))
    assert fc["fitted"] is False and fc["params"] == {"C": 0.5}
    fl = facts(entry(r, "le"))
    assert fl["classes_"] == ["a", "b", "c"] and fl["classes_dtype"] in ("<U1", "object")


def test_docs_for_called_library_callables() -> None:
    pytest.importorskip("sklearn")
    pd = pytest.importorskip("pandas")
    from sklearn.linear_model import LogisticRegression

    r = run("clf.fit(X, y)\npd.merge(a, b, on='k')", {"clf": LogisticRegression(), "pd": pd}, docs=True)
    docs = {d["call"]: d for d in r["docs"]}
    fit = docs["clf.fit"]
    assert fit["required"] == ["X", "y"] and "sample_weight" in fit["optional"]
    assert "LogisticRegression.fit" in fit["qualname"]
    merge = docs["pd.merge"]
    assert merge["required"][:2] == ["left", "right"] and merge["optional"]["how"] == "'inner'"
    assert len(merge["notes"]) <= 400


def test_scipy_sparse_and_pil_image() -> None:
    sparse = pytest.importorskip("scipy.sparse")
    image = pytest.importorskip("PIL.Image")
    m = sparse.csr_matrix([[0, 1], [2, 0]])
    img = image.new("RGB", (32, 16))
    r = run("m.toarray()\nimg.resize((8, 8))", {"m": m, "img": img})
    fm = facts(entry(r, "m"))
    assert fm["shape"] == [2, 2] and fm["nnz"] == 2 and fm["format"] == "csr"
    fi = facts(entry(r, "img"))
    assert fi["size"] == [32, 16] and fi["mode"] == "RGB"


def test_matplotlib_style_use_checks_available_styles() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = run('plt.style.use("seaborn-whitegrid")\nplt.hist([1, 2])', {"plt": plt})
    e = entry(r, "<matplotlib style 'seaborn-whitegrid'>")
    f = facts(e)
    assert f["in_library"] is False and f["deprecated_alias"] is False and f["file_exists"] is False
    assert any(s.startswith("seaborn") for s in f["close"])
    if "seaborn-v0_8-whitegrid" in plt.style.library:
        assert f["renamed"] == "seaborn-v0_8-whitegrid"
    assert modules(r)["matplotlib"]["version"] == matplotlib.__version__
    # the cell's own import of pyplot: the loaded matplotlib.style is read all the same
    ok = entry(
        run('import matplotlib.pyplot as plt\nplt.style.use("ggplot")', {}), "<matplotlib style 'ggplot'>"
    )
    assert facts(ok)["in_library"] is True and "renamed" not in facts(ok)


def test_loc_column_is_checked_on_the_frame() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1, 2]})
    e = entry(run("df.loc[df.a > 1, 'b'] = 0\nprint(df.loc[:, ['a', 'c']])", {"df": df}), "df")
    assert child(e, "df['b']")["missing"] and child(e, "df['c']")["missing"]


def test_non_contiguous_tensor_is_flagged() -> None:
    torch = pytest.importorskip("torch")
    t = torch.zeros(4, 6).t()
    assert facts(entry(run("t.view(-1)", {"t": t}), "t"))["contiguous"] is False


def test_list_of_arrays_is_described_compactly() -> None:
    np = pytest.importorskip("numpy")
    from crane_jupyterlab.runtime_text import render

    images = [np.zeros((32, 32, 3), dtype=np.uint8) for _ in range(48)]
    text = render(run("np.stack(images)", {"images": images, "np": np}))
    assert "images: list = [ndarray (32, 32, 3) uint8 x5] (+43 more, len 48)" in text


def test_docs_follow_imports_and_objects_the_cell_constructs() -> None:
    pytest.importorskip("sklearn")
    import sklearn.linear_model  # noqa: F401 - the kernel has imported it; the probe must not

    src = "from sklearn.linear_model import Ridge\nfrom notimported.sub import thing\n"
    src += "reg = Ridge(alpha=2)\nreg.fit(X, y)\nthing()"
    r = run(src, {}, docs=True)
    docs = {d["call"]: d for d in r["docs"]}
    assert set(docs) == {"Ridge", "reg.fit"}
    assert docs["reg.fit"]["required"] == ["X", "y"] and docs["reg.fit"]["signature"].startswith("(X, y")
    assert "alpha" in docs["Ridge"]["optional"]


def test_wide_frame_names_its_non_numeric_columns() -> None:
    pd = pytest.importorskip("pandas")
    from crane_jupyterlab.runtime_text import render

    df = pd.DataFrame({f"f{i}": [1.0, 2.0] for i in range(30)} | {"city": ["a", "b"]})
    r = run("model.fit(df, y)", {"df": df})
    assert facts(entry(r, "df"))["non_numeric_columns"] == {"city": str(df["city"].dtype)}
    assert f"non-numeric: city {df['city'].dtype}" in render(r)


def test_missing_column_read_as_attribute() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({" Age": [1.0], "Fare": [2.0]})
    r = run("df.Age.fillna(0)\ndf.Fare.mean()", {"df": df})
    e = entry(r, "df.Age")
    assert e["missing"] is True and facts(e)["close"][0] == " Age"
    assert child(entry(r, "df"), "df['Fare']").get("named") is True
    assert "df.Fare" not in [o["expr"] for o in r["objects"]]


def test_column_transformer_lists_the_columns_it_uses() -> None:
    pytest.importorskip("sklearn")
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    ct = ColumnTransformer([("num", StandardScaler(), ["Age", "Fare"]), ("cat", OneHotEncoder(), "Sex")])
    assert facts(entry(run("ct.fit_transform(df)", {"ct": ct}), "ct"))["columns_used"] == [
        "Age",
        "Fare",
        "Sex",
    ]


def test_torch_reports_whether_cuda_is_available() -> None:
    torch = pytest.importorskip("torch")
    mod = modules(run("torch.zeros(1).cuda()", {"torch": torch}))["torch"]
    assert {f["key"]: f["value"] for f in mod["facts"]}["cuda_available"] == torch.cuda.is_available()
