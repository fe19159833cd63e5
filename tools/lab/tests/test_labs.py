"""labs.Lab: the names (paths and Bazel labels) it spells from the registry."""
import pytest

from labs import Lab

LAB = Lab({"number": 8, "dir": "08_kv_cache", "target": "kv_cache", "title": "KV cache"},
          root="/nowhere")


def test_paths_are_spelled_from_the_folder_and_the_target():
    assert LAB.learner_file == "labs/08_kv_cache/kv_cache.cc"
    assert LAB.test_util_file == "labs/08_kv_cache/kv_cache_test_util.h"
    assert LAB.lesson_file == "docs/08_kv_cache.md"
    assert LAB.solution_file == "solutions/08_kv_cache/kv_cache.cc"
    assert LAB.build_files == ["labs/08_kv_cache/BUILD", "solutions/08_kv_cache/BUILD",
                               "tests/08_kv_cache/BUILD"]


def test_labels_are_spelled_from_the_folder_and_the_target():
    assert LAB.library == "//labs/08_kv_cache:kv_cache"
    assert LAB.public_test_remote == "//labs/08_kv_cache:kv_cache_public_test_remote"
    assert LAB.hidden_test_remote == "//tests/08_kv_cache:kv_cache_test_remote"
    assert LAB.learner_runtime("cumulative") == "//tests/08_kv_cache:learner_runtime_cumulative"


def test_a_name_is_documented_and_cannot_be_set():
    assert "learner edits" in Lab.learner_file.__doc__
    with pytest.raises(AttributeError, match="learner_file"):
        LAB.learner_file = "elsewhere.cc"
