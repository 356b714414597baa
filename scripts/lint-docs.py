#!/usr/bin/python3
# The documentation part of `make lint`: build every .rst file the series adds or changes (and
# the ABI files and kernel-doc comments it adds) with Debian's Sphinx, as `make htmldocs` would
# see them, and fail on any warning.  Usage: lint-docs.py <kernel git tree> <work dir>.
# Run with /usr/bin/python3, so that Debian's Python and python3-sphinx (scripts/packages.txt)
# are used even where another python3 comes first in PATH.
#
# How close to htmldocs, and why not closer:
# - The kernel's own Documentation/conf.py and Sphinx extensions (of branch `full`) are used,
#   so every kernel directive and role is the real one: `.. kernel-doc::` runs the tree's
#   scripts/kernel-doc, `.. kernel-abi::` scripts/get_abi.pl, `:c:func:` is the C domain's
#   role, autosectionlabel and automarkup are on.  Nothing kernel-specific is stubbed out or
#   silenced, so none of it can raise a false alarm and none of it hides a real warning.
# - A full htmldocs reads about 3,200 documents and runs kernel-doc on hundreds of source files
#   (the six documents that render our kernel-doc comments alone took 110 s here).  Instead
#   the source directory is a copy of branch `full`'s
#   Documentation/ in which every .rst file the series does not add or change is replaced by
#   a stub: a title, the labels (`.. _name:`) the file defines and its toctree directives.
#   So toctrees, :doc: and :ref: targets resolve exactly as in the real tree (a document the
#   series adds that no toctree reaches is reported), while a build takes about 20 s.  A
#   file that one of ours includes (`.. include::` and the like) is copied whole.
# - The ABI files the series adds or changes are rendered through `.. kernel-abi::` (as
#   admin-guide/abi-*.rst do), alone in Documentation/ABI of the copy.
# - Source files the series changes whose kernel-doc comments htmldocs renders are rendered
#   on a page of their own, by a copy of each `.. kernel-doc::` directive (options included)
#   of the tree that names them; their warnings, and kernel-doc's own, count only on lines
#   the series adds (upstream's comments are not ours to fix).
# - The `dummy` builder: it reads, resolves every reference and checks consistency like the
#   html builder, without writing pages.
# A warning counts when it points into a .rst or ABI file the series adds or changes (any
# line), into a source file above (lines the series adds), or nowhere (a broken extension or
# configuration), except the note that graphviz is missing (no figure of ours needs it).
import os
import re
import shutil
import subprocess
import sys

src, work = sys.argv[1], sys.argv[2]


def git(*args):
    return subprocess.run(['git', '-C', src] + list(args), check=True,
                          stdout=subprocess.PIPE).stdout.decode()


changed = git('diff', '--name-only', '--diff-filter=AM', 'pristine', 'full').split()
ours = [f for f in changed if f.startswith('Documentation/') and f.endswith('.rst')]
abi = [f for f in changed if f.startswith('Documentation/ABI/')]

# The kernel-doc directives of the tree (with their option lines) that name a source file
# the series changes, and the files their :export: and :internal: options name.
kdoc_re = re.compile(r'^\.\.\s+kernel-doc::\s+(\S+)[ \t]*\n((?:[ \t]+:.*\n)*)', re.M)
directives, kdoc, extra = [], set(), set()
for f in git('grep', '-l', 'kernel-doc::', 'full', '--', 'Documentation').split():
    for m in kdoc_re.finditer(git('show', f)):
        block = m.group(0).rstrip() + '\n'
        if m.group(1) in changed and block not in directives:
            directives.append(block)
            kdoc.add(m.group(1))
            for opt in re.findall(r':(?:export|internal):[ \t]*(.*)', m.group(2)):
                extra.update(':(glob)' + p for p in opt.split())
# A document of ours is rendered whole: the source files its own kernel-doc directives name
# must be in the copy too, changed by the series or not (journalling.rst names
# fs/jbd2/transaction.c); their warnings count only on lines the series adds, as above.
for f in ours:
    for m in kdoc_re.finditer(git('show', 'full:' + f)):
        extra.add(m.group(1))
        for opt in re.findall(r':(?:export|internal):[ \t]*(.*)', m.group(2)):
            extra.update(':(glob)' + p for p in opt.split())
kdoc = sorted(kdoc)

# The copy: Documentation/ and the two scripts the extensions run, from branch `full`.
top = os.path.join(work, 'srctree')
shutil.rmtree(work, ignore_errors=True)
os.makedirs(top)
archive = subprocess.Popen(['git', '-C', src, 'archive', 'full', 'Documentation',
                            'scripts/kernel-doc', 'scripts/get_abi.pl'] + kdoc +
                           sorted(extra),
                           stdout=subprocess.PIPE)
subprocess.run(['tar', '-x', '-C', top], stdin=archive.stdout, check=True)
if archive.wait():
    sys.exit('lint-docs: git archive failed')
doc = os.path.join(top, 'Documentation')

# Files our documents include are kept whole.
keep = set(ours)
inc_re = re.compile(r'^\s*\.\.\s+(?:include|literalinclude|kernel-include)::\s+(\S+)', re.M)
for f in ours:
    for t in inc_re.findall(open(os.path.join(top, f)).read()):
        t = t.replace('$srctree/', '/').replace('${srctree}/', '/')
        p = os.path.normpath(os.path.join('Documentation', t.lstrip('/')) if t.startswith('/')
                             else os.path.join(os.path.dirname(f), t))
        keep.add(p)

label_re = re.compile(r'^\.\.\s+_[^:]+:\s*$')
toctree_re = re.compile(r'^(\s*)\.\.\s+toctree::')
for root, _, files in os.walk(doc):
    for name in files:
        path = os.path.join(root, name)
        rel = os.path.relpath(path, top)
        if rel.startswith('Documentation/ABI/'):
            if rel not in abi:
                os.unlink(path)
            continue
        if not name.endswith('.rst') or rel in keep:
            continue
        lines = open(path, errors='replace').read().splitlines()
        labels, tocs, i = [], [], 0
        while i < len(lines):
            if label_re.match(lines[i]):
                labels.append(lines[i].strip())
            m = toctree_re.match(lines[i])
            i += 1
            if m:
                ind = len(m.group(1))
                block = [lines[i - 1][ind:]]
                while i < len(lines) and (not lines[i].strip() or
                                          len(lines[i]) - len(lines[i].lstrip()) > ind):
                    block.append(lines[i][ind:])
                    i += 1
                tocs.append('\n'.join(block))
        # A stub keeps the includes of documents of ours: Sphinx does not ask an included
        # document to be in a toctree (ext4's globals.rst includes journal.rst).
        incs = []
        for t in inc_re.findall('\n'.join(lines)):
            p = os.path.normpath(os.path.join(os.path.dirname(rel), t))
            if p in ours:
                incs.append('.. include:: ' + t)
        with open(path, 'w') as out:
            out.write('\n'.join(labels + ['', 'stub', '====', ''] + tocs + [''] + incs) + '\n')

pages = [os.path.join(top, f) for f in ours]
if abi:
    with open(os.path.join(doc, 'lint-series-abi.rst'), 'w') as out:
        out.write(':orphan:\n\nABI files of the series\n=======================\n\n'
                  '.. kernel-abi:: ABI\n   :rst:\n')
    pages.append(os.path.join(doc, 'lint-series-abi.rst'))
if kdoc:
    with open(os.path.join(doc, 'lint-series-kernel-doc.rst'), 'w') as out:
        out.write(':orphan:\n\nkernel-doc of the series\n========================\n\n')
        out.write('\n'.join(directives))
    pages.append(os.path.join(doc, 'lint-series-kernel-doc.rst'))

# Lines the series adds to each source file of kdoc.
added = {}
for f in kdoc:
    ranges = []
    for m in re.finditer(r'^@@ -\S+ \+(\d+)(?:,(\d+))? @@', git('diff', '-U0', 'pristine',
                                                                 'full', '--', f), re.M):
        ranges.append((int(m.group(1)), int(m.group(2) or 1)))
    added[f] = ranges

env = dict(os.environ, srctree=top, PYTHONDONTWRITEBYTECODE='1')
warnfile = os.path.join(work, 'warnings')
run = subprocess.run(['/usr/bin/python3', '-m', 'sphinx', '-b', 'dummy', '-q', '-c', doc,
                      '-D', 'kerneldoc_srctree=' + top,
                      '-D', 'kerneldoc_bin=' + os.path.join(top, 'scripts/kernel-doc'),
                      '-d', os.path.join(work, 'doctrees'), '-w', warnfile,
                      doc, os.path.join(work, 'out')], env=env,
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
output = run.stdout.decode(errors='replace')
msgs = set(open(warnfile).read().splitlines()) if os.path.exists(warnfile) else set()
msgs |= set(l for l in output.splitlines() if re.search(r'\b(warning|error)\b', l, re.I))

# "path:line: WARNING: ...", "path: WARNING: ..."; in text that a directive generated, the
# directive's place comes first and the generated text's own place last.
loc_re = re.compile(r'^(?:\S+: )*(/[^:\s]+?)(?::(\d+))?: '
                    r'(?:WARNING|ERROR|SEVERE|CRITICAL|warning|error)')
found = []
for m_line in sorted(msgs):
    m = loc_re.match(m_line)
    if not m:
        if 'dot(1) not found' in m_line or not re.search(r'WARNING|ERROR|SEVERE|CRITICAL',
                                                         m_line):
            continue
        found.append(m_line)
        continue
    path = os.path.relpath(m.group(1), top)
    line = int(m.group(2) or 0)
    if path.startswith('Documentation/ABI/') and abi:
        # get_abi.pl names a file without its ABI/<level>/ directory
        path = next((f for f in abi if os.path.basename(f) == os.path.basename(path)), path)
    elif path in ours:
        pass
    elif path in added and any(s <= line < s + n for s, n in added[path]):
        pass
    else:
        continue
    found.append(path + m_line[m.end(1):])

print('     sphinx %s on %d .rst, %d ABI and %d kernel-doc source files of the series' %
      (subprocess.run(['/usr/bin/python3', '-m', 'sphinx', '--version'],
                      stdout=subprocess.PIPE).stdout.decode().split()[-1],
       len(ours), len(abi), len(kdoc)))
for f in found:
    print('     ' + f)
if run.returncode:
    print(output[-3000:])
    print('lint-docs: sphinx-build failed (exit %d)' % run.returncode)
    sys.exit(1)
print('lint-docs: %d warnings' % len(found))
sys.exit(1 if found else 0)
