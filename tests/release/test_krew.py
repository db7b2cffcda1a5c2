"""Self-tests of scripts/krew.py: the validator must reject what krew-index rejects, so that
a passing validation of the real manifest means something."""
import copy
import os
import sys
import tarfile
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import krew  # noqa: E402

import yaml  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def make_archive(folder, name, files):
    path = os.path.join(folder, name)
    with tarfile.open(path, "w:gz") as t:
        for member, (data, mode) in files.items():
            src = os.path.join(folder, "src-" + member)
            with open(src, "wb") as f:
                f.write(data)
            os.chmod(src, mode)
            t.add(src, arcname=member)
    return path


class ValidatorTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        make_archive(self.dir, "kw_linux_amd64.tar.gz", {
            "kubectl-karpenter_why": (b"#!/bin/sh\necho ok\n", 0o755),
            "LICENSE": (b"Apache", 0o644),
        })
        self.manifest = {
            "apiVersion": krew.API_VERSION,
            "kind": "Plugin",
            "metadata": {"name": "karpenter-why"},
            "spec": {
                "version": "v0.1.0",
                "homepage": "https://example.org",
                "shortDescription": "short",
                "description": "long\n",
                "platforms": [{
                    "selector": {"matchLabels": {"os": "linux", "arch": "amd64"}},
                    "uri": "https://example.org/kw_linux_amd64.tar.gz",
                    "sha256": krew.sha256_of(os.path.join(self.dir, "kw_linux_amd64.tar.gz")),
                    "files": [{"from": "kubectl-karpenter_why", "to": "."}, {"from": "LICENSE", "to": "."}],
                    "bin": "kubectl-karpenter_why",
                }],
            },
        }

    def check(self, manifest, file_name="karpenter-why.yaml"):
        path = os.path.join(self.dir, file_name)
        with open(path, "w") as f:
            yaml.safe_dump(manifest, f)
        krew.validate(path, self.dir, None)

    def broken(self, mutate, file_name="karpenter-why.yaml"):
        manifest = copy.deepcopy(self.manifest)
        mutate(manifest)
        with self.assertRaises(krew.Invalid):
            self.check(manifest, file_name)

    def test_good_manifest_passes(self):
        self.check(self.manifest)

    def test_name_must_match_file(self):
        self.broken(lambda m: None, file_name="other.yaml")

    def test_version_must_be_semver_with_v(self):
        self.broken(lambda m: m["spec"].update(version="0.1.0"))
        self.broken(lambda m: m["spec"].update(version="v0.1"))

    def test_short_description_one_line(self):
        self.broken(lambda m: m["spec"].update(shortDescription="a\nb"))

    def test_wrong_sha(self):
        self.broken(lambda m: m["spec"]["platforms"][0].update(sha256="0" * 64))

    def test_unsupported_selector_key(self):
        self.broken(lambda m: m["spec"]["platforms"][0]["selector"]["matchLabels"].update(distro="debian"))

    def test_selector_matching_nothing(self):
        self.broken(lambda m: m["spec"]["platforms"][0]["selector"]["matchLabels"].update(os="plan9"))

    def test_overlapping_selectors(self):
        def overlap(m):
            extra = copy.deepcopy(m["spec"]["platforms"][0])
            extra["selector"] = {"matchLabels": {"os": "linux"}}
            m["spec"]["platforms"].append(extra)
        self.broken(overlap)

    def test_bin_must_exist_in_archive(self):
        self.broken(lambda m: m["spec"]["platforms"][0].update(bin="kubectl-other"))

    def test_files_glob_must_match(self):
        self.broken(lambda m: m["spec"]["platforms"][0]["files"].append({"from": "README.md", "to": "."}))

    def test_license_required(self):
        self.broken(lambda m: m["spec"]["platforms"][0].update(files=[{"from": "kubectl-karpenter_why", "to": "."}]))

    def test_binary_must_be_executable(self):
        make_archive(self.dir, "kw_linux_amd64.tar.gz", {
            "kubectl-karpenter_why": (b"#!/bin/sh\n", 0o644),
            "LICENSE": (b"Apache", 0o644),
        })
        self.broken(lambda m: m["spec"]["platforms"][0].update(
            sha256=krew.sha256_of(os.path.join(self.dir, "kw_linux_amd64.tar.gz"))))

    def test_render_fills_uri_and_sha_and_drops_missing_platforms(self):
        with open(os.path.join(ROOT, ".krew.yaml")) as f:
            template = f.read()
        tag = "v0.1.0"
        name = f"kubectl-karpenter_why_{tag}_linux_amd64.tar.gz"
        os.rename(os.path.join(self.dir, "kw_linux_amd64.tar.gz"), os.path.join(self.dir, name))
        rendered = yaml.safe_load(krew.render(template, self.dir, tag, allow_missing=True))
        [linux] = rendered["spec"]["platforms"]
        self.assertTrue(linux["uri"].endswith("/" + name))
        self.assertEqual(linux["sha256"], krew.sha256_of(os.path.join(self.dir, name)))
        self.assertEqual(rendered["spec"]["version"], tag)
        with self.assertRaises(krew.Invalid):
            krew.render(template, self.dir, tag, allow_missing=False)

    def test_template_covers_every_platform_we_ship_without_overlap(self):
        with open(os.path.join(ROOT, ".krew.yaml")) as f:
            text = krew.ADD_URI_AND_SHA.sub(lambda m: f"{m.group('indent')}uri: x\n{m.group('indent')}sha256: {'a' * 64}", f.read())
        manifest = yaml.safe_load(krew.TAG.sub("v0.1.0", text))
        platforms = krew.validate_structure("karpenter-why", manifest)
        krew.validate_platform_coverage(platforms)
        covered = {(o, a) for o, a in krew.SUPPORTED_PLATFORMS
                   if any(krew.selector_matches(p["selector"], o, a) for p in platforms)}
        self.assertEqual(covered, {(o, a) for o in ("linux", "darwin", "windows") for a in ("amd64", "arm64")})


if __name__ == "__main__":
    unittest.main()
