#!/usr/bin/env python3
"""The krew plugin manifest of karpenter-why: render it for a release, and validate it the way
krew-index's `validate-krew-manifest` does, then install it into a krew-like layout.

  krew.py render --template .krew.yaml --dist dist --tag v0.1.0 [--allow-missing]
      `{{ .TagName }}` becomes the tag and each `{{addURIAndSha "URL" .TagName}}` the platform's
      `uri` and the sha256 of the archive of the same file name in the dist folder (the
      krew-release-bot template syntax). With --allow-missing, platforms whose archive was not
      built here are left out (a Linux machine cannot build the macOS archives).

  krew.py validate MANIFEST --dist dist [--install-root DIR]
      Structural validation (apiVersion, kind, name = file name, semver version with `v`,
      one-line short description, platforms with uri, sha256, bin, files and a selector on
      os/arch only), every selector matching a supported os/arch and no two overlapping, each
      archive's sha256 equal to the manifest's, the `files` globs and `bin` present in the
      archive with the binary executable and a LICENSE inside. With --install-root, the
      platform of this machine is installed as krew would: extracted under
      DIR/store/<name>/<version>, linked as DIR/bin/kubectl-<name with _ for ->.
"""
import argparse
import fnmatch
import hashlib
import os
import platform
import re
import shutil
import stat
import sys
import tarfile
import zipfile

import yaml

API_VERSION = "krew.googlecontainertools.github.com/v1alpha2"
SUPPORTED_PLATFORMS = [
    ("darwin", "amd64"), ("darwin", "arm64"),
    ("linux", "386"), ("linux", "amd64"), ("linux", "arm"), ("linux", "arm64"),
    ("linux", "ppc64le"), ("linux", "s390x"),
    ("windows", "386"), ("windows", "amd64"), ("windows", "arm64"),
]
SAFE_NAME = re.compile(r"^[\w-]+$")
SHA256 = re.compile(r"^[a-f0-9]{64}$")
# semver 2.0 with the `v` prefix krew requires.
SEMVER = re.compile(
    r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
ADD_URI_AND_SHA = re.compile(
    r'^(?P<indent>[ \t]*)\{\{\s*addURIAndSha\s+"(?P<url>[^"]+)"\s+\.TagName\s*\}\}\s*$', re.M
)
TAG = re.compile(r"\{\{\s*\.TagName\s*\}\}")


class Invalid(Exception):
    pass


def _block_strings(dumper, data):
    # Multi-line descriptions read as YAML block scalars, as hand-written manifests do.
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


yaml.add_representer(str, _block_strings, Dumper=yaml.SafeDumper)


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def archive_path(dist, uri):
    return os.path.join(dist, uri.rsplit("/", 1)[-1])


def render(template, dist, tag, allow_missing):
    missing = []

    def uri_and_sha(match):
        url = TAG.sub(tag, match.group("url"))
        archive = archive_path(dist, url)
        if os.path.exists(archive):
            sha = sha256_of(archive)
        else:
            missing.append(archive)
            sha = "missing"
        indent = match.group("indent")
        return f"{indent}uri: {url}\n{indent}sha256: {sha}"

    text = TAG.sub(tag, ADD_URI_AND_SHA.sub(uri_and_sha, template))
    if "{{" in text:
        raise Invalid("the template has a placeholder this renderer does not know")
    if missing and not allow_missing:
        raise Invalid("no archive for " + ", ".join(missing))
    manifest = yaml.safe_load(text)
    platforms = [p for p in manifest["spec"]["platforms"] if p.get("sha256") != "missing"]
    if not platforms:
        raise Invalid(f"no release archive found in {dist}")
    manifest["spec"]["platforms"] = platforms
    return yaml.safe_dump(manifest, sort_keys=False, width=100)


def selector_matches(selector, os_name, arch):
    labels = {"os": os_name, "arch": arch}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        value, values = labels.get(expr["key"]), expr.get("values") or []
        op = expr["operator"]
        if (op == "In" and value not in values) or (op == "NotIn" and value in values) \
                or (op == "Exists" and value is None) or (op == "DoesNotExist" and value is not None):
            return False
    return True


def validate_selector(selector):
    if not isinstance(selector, dict):
        raise Invalid("nil selector is not supported")
    labels, exprs = selector.get("matchLabels"), selector.get("matchExpressions")
    if not labels and not exprs:
        raise Invalid("empty selector is not supported")
    for key in list((labels or {}).keys()) + [e.get("key") for e in exprs or []]:
        if key not in ("os", "arch"):
            raise Invalid(f"selector key {key!r} not supported")


def validate_structure(name, manifest):
    if manifest.get("apiVersion") != API_VERSION:
        raise Invalid(f"apiVersion={manifest.get('apiVersion')!r}, want {API_VERSION!r}")
    if manifest.get("kind") != "Plugin":
        raise Invalid(f"kind={manifest.get('kind')!r}, only 'Plugin' is supported")
    if not SAFE_NAME.match(name):
        raise Invalid(f"the plugin name {name!r} is not allowed")
    if (manifest.get("metadata") or {}).get("name") != name:
        raise Invalid(f"plugin should be named {name!r} (its file name)")
    spec = manifest.get("spec") or {}
    short = spec.get("shortDescription") or ""
    if not short or "\n" in short or "\r" in short:
        raise Invalid("shortDescription must be set and on one line")
    if not SEMVER.match(str(spec.get("version", ""))):
        raise Invalid(f"version {spec.get('version')!r} is not semver with a leading v")
    for field in ("homepage", "description"):
        if not spec.get(field):
            raise Invalid(f"{field} must be set")
    platforms = spec.get("platforms") or []
    if not platforms:
        raise Invalid("should have a platform specified")
    for i, p in enumerate(platforms):
        where = f"spec.platforms[{i}]"
        if not p.get("uri"):
            raise Invalid(f"{where}: uri has to be set")
        if not SHA256.match(str(p.get("sha256", ""))):
            raise Invalid(f"{where}: sha256 {p.get('sha256')!r} is not a sha256")
        if not p.get("bin"):
            raise Invalid(f"{where}: bin has to be set")
        files = p.get("files")
        if files is not None and (not files or any(not f.get("from") or not f.get("to") for f in files)):
            raise Invalid(f"{where}: files entries need from and to")
        validate_selector(p.get("selector"))
    return platforms


def validate_platform_coverage(platforms):
    for i, p in enumerate(platforms):
        if not any(selector_matches(p["selector"], o, a) for o, a in SUPPORTED_PLATFORMS):
            raise Invalid(f"spec.platforms[{i}] selector matches no supported os/arch")
    for o, a in SUPPORTED_PLATFORMS:
        hits = [i for i, p in enumerate(platforms) if selector_matches(p["selector"], o, a)]
        if len(hits) > 1:
            raise Invalid(f"spec.platforms {hits} overlap on os={o}/arch={a}")


def archive_members(path):
    """Name -> (bytes, executable) of every regular file in a .tar.gz or .zip."""
    members = {}
    if path.endswith(".zip"):
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                if not info.is_dir():
                    mode = info.external_attr >> 16
                    members[info.filename] = (z.read(info), bool(mode & 0o111) or info.filename.endswith(".exe"))
    else:
        with tarfile.open(path, "r:gz") as t:
            for info in t.getmembers():
                if info.isfile():
                    members[info.name] = (t.extractfile(info).read(), bool(info.mode & 0o111))
    return members


def installed_files(platform_spec, members):
    """Applies the krew `files` operations: destination path -> (bytes, executable)."""
    ops = platform_spec.get("files") or [{"from": "*", "to": "."}]
    out = {}
    for op in ops:
        matched = [n for n in members if fnmatch.fnmatch(n, op["from"])]
        if not matched:
            raise Invalid(f"files: {op['from']!r} matches nothing in the archive")
        for n in matched:
            dest = os.path.normpath(os.path.join(op["to"], os.path.basename(n)))
            out[dest] = members[n]
    return out


def validate_archive(i, platform_spec, dist):
    where = f"spec.platforms[{i}]"
    path = archive_path(dist, platform_spec["uri"])
    if not os.path.exists(path):
        raise Invalid(f"{where}: archive {path} not found")
    if sha256_of(path) != platform_spec["sha256"]:
        raise Invalid(f"{where}: sha256 of {path} differs from the manifest")
    members = archive_members(path)
    files = installed_files(platform_spec, members)
    bin_name = os.path.normpath(platform_spec["bin"])
    if bin_name not in files:
        raise Invalid(f"{where}: bin {bin_name!r} is not installed by the files operations")
    if not files[bin_name][1]:
        raise Invalid(f"{where}: bin {bin_name!r} is not executable")
    if platform_spec["selector"].get("matchLabels", {}).get("os") == "windows" and not bin_name.endswith(".exe"):
        raise Invalid(f"{where}: a Windows bin must end in .exe")
    if not any(os.path.basename(n).upper().startswith(("LICENSE", "COPYING")) for n in files):
        raise Invalid(f"{where}: no LICENSE file is installed")
    return files


def this_machine():
    os_name = {"Linux": "linux", "Darwin": "darwin", "Windows": "windows"}[platform.system()]
    arch = {"x86_64": "amd64", "AMD64": "amd64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine()]
    return os_name, arch


def install(name, version, platform_spec, files, root):
    store = os.path.join(root, "store", name, version)
    shutil.rmtree(store, ignore_errors=True)
    for dest, (data, executable) in files.items():
        target = os.path.join(store, dest)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
        if executable:
            os.chmod(target, os.stat(target).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    bin_dir = os.path.join(root, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    link = os.path.join(bin_dir, "kubectl-" + name.replace("-", "_"))
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.join(store, os.path.normpath(platform_spec["bin"])), link)
    return link


def validate(manifest_path, dist, install_root):
    file_name = os.path.basename(manifest_path)
    if not file_name.endswith(".yaml"):
        raise Invalid(f"expected a .yaml manifest, got {file_name}")
    with open(manifest_path, encoding="utf-8") as f:
        manifest = yaml.safe_load(f)
    name = file_name[: -len(".yaml")]
    platforms = validate_structure(name, manifest)
    validate_platform_coverage(platforms)
    installed = [validate_archive(i, p, dist) for i, p in enumerate(platforms)]
    print(f"krew manifest {manifest_path}: structure OK, {len(platforms)} platform(s), no overlap, archives OK")
    if install_root:
        os_name, arch = this_machine()
        for p, files in zip(platforms, installed):
            if selector_matches(p["selector"], os_name, arch):
                link = install(name, manifest["spec"]["version"], p, files, install_root)
                print(f"installed for {os_name}/{arch}: {link}")
                return
        raise Invalid(f"no platform of the manifest matches this machine ({os_name}/{arch})")


def main():
    parser = argparse.ArgumentParser(description="render or validate the krew manifest")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("render")
    r.add_argument("--template", required=True)
    r.add_argument("--dist", required=True)
    r.add_argument("--tag", required=True)
    r.add_argument("--allow-missing", action="store_true")
    v = sub.add_parser("validate")
    v.add_argument("manifest")
    v.add_argument("--dist", required=True)
    v.add_argument("--install-root")
    args = parser.parse_args()
    try:
        if args.command == "render":
            with open(args.template, encoding="utf-8") as f:
                sys.stdout.write(render(f.read(), args.dist, args.tag, args.allow_missing))
        else:
            validate(args.manifest, args.dist, args.install_root)
    except Invalid as e:
        print(f"krew.py {args.command}: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
