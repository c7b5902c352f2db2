"""Checks that core keeps its floors: no file includes a header of a higher floor.

Usage: check_floor_includes.py CORE_DIR

The floors, lowest first, are util/text/io/remote, model/formats, quant, analysis/compat/ollama/edit, open,
infer and worker (core/CMakeLists.txt builds one library per floor). A file's floor is its area's: the
folder under core/include/mlens/ or core/src/; the headers directly in core/include/mlens/ are on
the lowest floor. Every quoted include of an area's header ("mlens/<area>/...", or a private
"<area>/..." or "../<area>/...") must name the file's own floor or one below. Each source must also
be listed, on its own floor, in core/CMakeLists.txt, and every area must be on a floor. Prints
every offence and exits 1 when there is one.
"""
import os
import re
import sys

FLOORS = [["util", "text", "io", "remote"], ["model", "formats"], ["quant"], ["analysis", "compat", "ollama", "edit"], ["open"], ["infer"], ["worker"]]
FLOOR_LISTS = ["BASE", "MODEL", "QUANT", "ANALYSIS", "OPEN", "INFER", "WORKER"]
FLOOR_OF = {area: n for n, areas in enumerate(FLOORS) for area in areas}
INCLUDE = re.compile(r'^\s*#\s*include\s*"(?:mlens/|(?:\.\./)+)?([a-z_0-9]+)/')


def area_of(relative):
    """The area of a path relative to core/, or "" for the headers directly in include/mlens/."""
    parts = relative.split("/")
    if parts[0] == "include":
        return parts[2] if len(parts) > 3 else ""
    return parts[1]


def include_offences(core):
    offences = []
    for top in ("include", "src"):
        for folder, _, names in os.walk(os.path.join(core, top)):
            for name in sorted(names):
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, core)
                area = area_of(relative)
                if area and area not in FLOOR_OF:
                    offences.append(f"core/{relative}: area {area} is on no floor (add it to FLOORS here and to a floor's "
                                    f"list in core/CMakeLists.txt)")
                    continue
                floor = FLOOR_OF.get(area, 0)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and FLOOR_OF.get(m.group(1), -1) > floor:
                            offences.append(f"core/{relative}:{number}: {area or 'mlens'} (floor {floor + 1}) includes "
                                            f"{m.group(1)} (floor {FLOOR_OF[m.group(1)] + 1}): {line.strip()}")
    return offences


def listing_offences(core):
    with open(os.path.join(core, "CMakeLists.txt"), encoding="utf-8") as f:
        text = f.read()
    offences = []
    listed = set()
    for n, name in enumerate(FLOOR_LISTS):
        m = re.search(r"set\(MLENS_CORE_%s_SOURCES\s(.*?)\)" % name, text, re.S)
        if not m:
            offences.append(f"core/CMakeLists.txt: no MLENS_CORE_{name}_SOURCES list")
            continue
        for source in m.group(1).split():
            listed.add(source)
            area = area_of(source)
            if FLOOR_OF.get(area) != n:
                offences.append(f"core/CMakeLists.txt: {source} is listed on floor {n + 1} ({'/'.join(FLOORS[n])}), "
                                f"its area {area} is not")
    for folder, _, names in os.walk(os.path.join(core, "src")):
        for name in sorted(names):
            source = os.path.relpath(os.path.join(folder, name), core)
            if name.endswith(".cpp") and source not in listed:
                offences.append(f"core/CMakeLists.txt: {source} is on no floor's list")
    return offences


def main():
    core = sys.argv[1]
    offences = include_offences(core) + listing_offences(core)
    for offence in offences:
        print(offence)
    if offences:
        print(f"{len(offences)} problem(s) with core's floors; floors, lowest first: "
              + " -> ".join("/".join(areas) for areas in FLOORS))
        return 1
    print("every core file includes only its own floor and the floors below")
    return 0


if __name__ == "__main__":
    sys.exit(main())
