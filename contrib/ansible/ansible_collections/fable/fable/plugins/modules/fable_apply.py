#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: fable contributors
# SPDX-License-Identifier: MIT OR Apache-2.0 (as fable)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: fable_apply
short_description: Converge a machine on a fable inventory (fleet.toml)
version_added: "0.1.0"
description:
  - Runs C(fable apply --json) (or C(fable sync --json) with O(sync=true)) on the managed host,
    which installs, keeps current and prunes the hook sources the inventory lists and wires
    them into every AI coding agent's settings.
  - The task is changed exactly when fable reports C(changed) in its JSON document (in check
    mode C(would_change), where fable prints it), or when O(inventory) rewrites the file.
  - In check mode it runs C(fable apply --dry-run) and writes nothing; with O(inventory), the
    content is planned from a temporary copy (with the lock beside it) when it differs from
    the file on the host.
  - In diff mode it shows the planned change - the inventory file's, then the snapshots
    synced, the settings patched (JSON patch operations), git hooks updated and sources
    pruned.
  - A missing inventory file is refused, since fable reads it as an empty inventory and
    would prune every source a previous apply installed.
options:
  inventory:
    description:
      - The inventory's TOML text. It is written to O(inventory_path) (default
        C($FABLE_HOME/fleet.toml)) with mode 0600 when it differs from the file there.
      - Relative C(path =) entries resolve against the inventory's directory (in check mode,
        a temporary one); use absolute or C(~/) paths.
    type: str
  inventory_path:
    description:
      - The inventory file on the managed host (C(fable apply -f)).
      - Default C($FABLE_INVENTORY), else C($FABLE_HOME/fleet.toml).
    type: path
  sync:
    description:
      - Run C(fable sync) instead, which fetches the inventory's git sources, pins them in
        the lock beside the inventory and then applies. Without it, a git source must have
        been synced already (its checkout must hold the commit the lock pins).
      - In check mode a sync is planned as C(fable apply --dry-run), which fetches nothing; a git
        source not synced yet makes the task changed, a new commit behind an already synced
        C(ref) is not seen.
    type: bool
    default: false
  timeout:
    description: Seconds each git fetch may take (O(sync=true) only).
    type: int
    default: 120
  scope:
    description:
      - Which of fable's installations to manage. V(user) (fable's default) is the user's own
        (C($FABLE_HOME), the agents' user settings); V(machine) is the machine-wide one, for
        every user of the host (fable's global flag C(--scope machine), before the
        subcommand).
      - >-
        V(machine) writes system paths, so the task needs C(become: true), unless
        O(machine_root) roots them somewhere the remote user may write.
      - Needs a fable that has C(--scope).
    type: str
    choices: [user, machine]
    default: user
  machine_root:
    description:
      - The directory every machine-wide path of fable (C(/etc/...), C(/var/lib/fable)) is
        rooted under - C(FABLE_SYSTEM_ROOT) in fable's environment, its C(--root) - for an
        image being built or a test. Only with O(scope=machine); then the fable home is
        C(<machine_root>/var/lib/fable).
    type: path
attributes:
  check_mode:
    description: Runs C(fable apply --dry-run); nothing on the host is written.
    support: full
  diff_mode:
    description: Shows the inventory file's change and the change fable plans.
    support: full
notes:
  - fable must already be installed on the managed host.
extends_documentation_fragment:
  - fable.fable.fable
author:
  - fable contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Apply the inventory shipped with the playbook
  fable.fable.fable_apply:
    inventory: "{{ lookup('ansible.builtin.file', 'fleet.toml') }}"

- name: Apply an inventory already on the host, fetching its git sources
  fable.fable.fable_apply:
    inventory_path: /etc/fable/fleet.toml
    sync: true
    fable_bin: /usr/local/bin/fable

- name: The machine-wide installation, for every user of the host (fable --scope machine)
  fable.fable.fable_apply:
    inventory: "{{ lookup('ansible.builtin.file', 'machine-fleet.toml') }}"
    inventory_path: /etc/fable/fleet.toml
    scope: machine
  become: true
'''

RETURN = r'''
report:
  description: fable's JSON document (for O(sync=true), the sync document, whose C(apply) is the apply's).
  returned: success
  type: dict
inventory:
  description: The inventory applied.
  returned: always
  type: str
pruned:
  description: Keys of sources that left the inventory and were (in check mode, would be) removed.
  returned: success
  type: list
  elements: str
sources:
  description: Each inventory source with its kind, whether it changed and its pinned commit.
  returned: success
  type: list
  elements: dict
rc:
  description: fable's exit code.
  returned: when fable ran, except for a sync planned in check mode
  type: int
'''

import json
import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_text
from ansible_collections.fable.fable.plugins.module_utils.fable import (
    COMMON_ARGS, default_inventory, error_of, fail, failure_message, is_ok, run_fable)


def read(path):
    try:
        with open(path, 'rb') as f:
            return to_text(f.read())
    except (IOError, OSError):
        return None


def write_inventory(module, path, content):
    """Writes the inventory atomically (0600), creating its directory (0700)."""
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o700)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix='.fleet-', suffix='.tmp')
    with os.fdopen(fd, 'wb') as f:
        f.write(to_bytes(content))
        os.fchmod(f.fileno(), 0o600)
    module.atomic_move(tmp, path)


def apply_report(doc, sync):
    """The apply part of fable's document."""
    if sync and isinstance(doc.get('apply'), dict):
        return doc['apply']
    return doc


def changed_of(doc, sync, check_mode):
    """``changed`` from the top level (a dry run's ``would_change``); a sync document from
    before the envelope: the lock or the apply changed."""
    if check_mode and 'would_change' in doc:
        return bool(doc['would_change'])
    if 'changed' in doc:
        return bool(doc['changed'])
    if sync:
        return bool(doc.get('lock_changed')) or bool(apply_report(doc, sync).get('changed'))
    return False


def short(value):
    return (value or '')[:12]


def planned(report, pins=None):
    """The planned change, one line per step, from an apply report."""
    lines = []
    verb = 'would ' if report.get('dry_run') else ''
    for pin in pins or []:
        if pin.get('previous_commit'):
            lines.append('pin %s: %s -> %s' % (pin.get('name'), short(pin['previous_commit']),
                                               short(pin.get('commit'))))
    for s in report.get('sources', []):
        install = s.get('install', {})
        at = ' at commit %s' % short(s['commit']) if s.get('commit') else ''
        for snap in install.get('sources', []):
            if snap.get('changed'):
                lines.append('source %s (%s): %ssync snapshot %s -> %s%s' % (
                    s.get('name'), s.get('kind'), verb,
                    short(snap.get('previous_tree_hash')) or '(none)',
                    short(snap.get('tree_hash')), at))
        for p in install.get('profiles', []):
            if not p.get('changed'):
                continue
            lines.append('source %s: %s%s %s' % (s.get('name'), verb, 'patch', p.get('path')))
            for op in p.get('patch', []):
                lines.append('    %s %s' % (op.get('op'), op.get('path')))
    for g in report.get('git', []):
        if g.get('changed'):
            lines.append('git hooks %s: %supdate' % (g.get('hooks_dir') or g.get('shim_dir'), verb))
    for key in report.get('pruned', []):
        lines.append('source %s: %sprune (it left the inventory)' % (key, verb))
    return '\n'.join(lines) + '\n' if lines else ''


def problems(report):
    """Skipped profiles and failed git targets: fable exits 1 for them."""
    out = []
    for s in report.get('sources', []):
        install = s.get('install', {})
        for p in install.get('skipped_profiles', []):
            out.append('%s %s: skipped: %s (fix: %s)' % (
                p.get('host'), p.get('path'), p.get('error'), p.get('fix')))
        for f in install.get('git_failures', []):
            out.append('git hooks: %s' % f)
    return out


def summary(report):
    out = []
    for s in report.get('sources', []):
        out.append(dict(name=s.get('name'), kind=s.get('kind'), commit=s.get('commit'),
                        changed=bool(s.get('install', {}).get('changed'))))
    return out


def not_synced(doc, err):
    """True when fable refused because a git source has not been synced."""
    error = error_of(doc)
    text = '%s %s' % (error.get('message') or '', err)
    return 'not_synced' in str(error.get('kind', '')) or 'run `fable sync`' in text


def main():
    args = dict(
        inventory=dict(type='str'),
        inventory_path=dict(type='path'),
        sync=dict(type='bool', default=False),
        timeout=dict(type='int', default=120),
    )
    args.update(COMMON_ARGS)
    module = AnsibleModule(argument_spec=args, supports_check_mode=True)
    p = module.params
    path = os.path.abspath(p['inventory_path'] or default_inventory(module))
    result = dict(changed=False, inventory=path, rc=0)

    planned_from = path
    scratch = None
    diffs = []
    if p['inventory'] is not None:
        current = read(path)
        if current != p['inventory']:
            diffs.append(dict(before_header=path, after_header=path, before=current or '',
                              after=p['inventory']))
            if module.check_mode:
                # Planned from a copy with the lock beside it; nothing on the host is written.
                scratch = tempfile.mkdtemp(prefix='fable-apply-', dir=module.tmpdir)
                planned_from = os.path.join(scratch, os.path.basename(path))
                with open(planned_from, 'wb') as f:
                    f.write(to_bytes(p['inventory']))
                lock = os.path.splitext(path)[0] + '.lock'
                if os.path.isfile(lock):
                    shutil.copy(lock, os.path.splitext(planned_from)[0] + '.lock')
            else:
                write_inventory(module, path, p['inventory'])
            result['changed'] = True
    elif not os.path.isfile(path):
        module.fail_json(msg='the inventory %s does not exist (fable would read it as empty and '
                             'prune every source a previous apply installed); give `inventory` '
                             'or `inventory_path`, or write "schema = 1" to remove everything'
                         % path, **result)

    sync = p['sync'] and not module.check_mode
    if sync:
        cmd = ['sync', '-f', planned_from, '--timeout', str(p['timeout'])]
    else:
        cmd = ['apply', '-f', planned_from] + (['--dry-run'] if module.check_mode else [])
    try:
        rc, doc, out, err, argv = run_fable(module, cmd)
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    result['rc'] = rc
    if scratch:
        # Name the inventory on the host, not its temporary copy, in what fable printed.
        out, err = out.replace(planned_from, path), err.replace(planned_from, path)
        doc = json.loads(json.dumps(doc).replace(json.dumps(planned_from)[1:-1],
                                                 json.dumps(path)[1:-1]))
    if p['sync'] and module.check_mode and not is_ok(rc, doc) and not_synced(doc, err):
        # A git source not fetched yet: the sync would fetch, check out and apply it.
        # (fable's refusal is the plan here, not a failure: Ansible fails any result whose
        # rc is not 0.)
        del result['rc']
        result['changed'] = True
        result['msg'] = 'a git source is not synced yet: the sync would fetch and apply it'
        if module._diff:
            result['diff'] = diffs + [
                dict(prepared='would fetch and check out the git sources, then apply\n')]
        module.exit_json(**result)
    if not isinstance(doc, dict) or 'error' in doc or not ('sources' in doc or 'apply' in doc):
        # An error (fable's error object, or no document at all).
        fail(module, 'fable %s' % cmd[0], rc, doc, out, err, argv,
             changed=result['changed'] and not module.check_mode, inventory=path)
    report = apply_report(doc, sync)
    result.update(
        changed=result['changed'] or changed_of(doc, sync, module.check_mode),
        report=doc,
        pruned=report.get('pruned', []),
        sources=summary(report),
    )
    if not is_ok(rc, doc) or problems(report):
        # Done, with a partial failure the report shows (fable exits 1).
        trouble = problems(report)
        result['msg'] = ('fable %s: %s' % (cmd[0], '; '.join(trouble)) if trouble
                         else failure_message('fable %s' % cmd[0], rc, doc, err))
        module.fail_json(**result)
    if module._diff:
        plan = planned(report, doc.get('pins') if sync else None)
        result['diff'] = diffs + ([dict(prepared=plan)] if plan else [])
    module.exit_json(**result)


if __name__ == '__main__':
    main()
