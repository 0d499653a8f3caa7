#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: fable contributors
# SPDX-License-Identifier: MIT OR Apache-2.0 (as fable)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: fable_report
short_description: One machine's part of a fable fleet report
version_added: "0.1.0"
description:
  - Runs C(fable status --json) and C(fable list --foreign --json) on the managed host and
    returns the machine's digest RV(machine) - its state, the sources that are not current
    (with fable's fix), the foreign hook entries (the high-risk ones apart), the inert entries
    status reports and the files fable could not read.
  - The filter P(fable.fable.fleet_report#filter) gathers every host's digest into one JSON
    document; the playbook C(fable.fable.fleet_report) (or the role's C(report) tasks) runs
    both and writes the document on the controller.
  - Reads only; never changed.
options:
  project:
    description:
      - The directory C(fable list) runs in; it reads that project's hook files
        (C(.claude/settings.json), ...) besides the user profiles.
      - Default the remote user's C(HOME), so only the user profiles are read.
    type: path
  scope:
    description:
      - >-
        Which of fable's installations to read. V(user) (fable's default) is the user's own;
        V(machine) is the machine-wide one (fable's global flag C(--scope machine)), which
        needs C(become: true) unless O(machine_root) roots it somewhere the remote user may
        read. Needs a fable that has C(--scope).
    type: str
    choices: [user, machine]
    default: user
  machine_root:
    description:
      - The directory every machine-wide path of fable is rooted under (C(FABLE_SYSTEM_ROOT)
        in fable's environment, its C(--root)). Only with O(scope=machine).
    type: path
attributes:
  check_mode:
    description: Reads only, in check mode too.
    support: full
  diff_mode:
    description: Nothing changes, so there is no diff.
    support: none
extends_documentation_fragment:
  - fable.fable.fable
author:
  - fable contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: This machine's part of the fleet report
  fable.fable.fable_report:
  register: fable_machine_report

- name: Every machine's, in one document
  ansible.builtin.set_fact:
    fleet: "{{ ansible_play_hosts_all | fable.fable.fleet_report(hostvars, 'fable_machine_report') }}"
  run_once: true
'''

RETURN = r'''
machine:
  description: The machine's digest.
  returned: success
  type: dict
  contains:
    state:
      description:
        - V(current) (every source current), V(not_current) (a source is not), V(inert) (every
          source current, but a host will not run some of its entries, see RV(machine.inert))
          or V(not_installed) (fable has installed no source).
      type: str
    sources:
      description: How many sources fable has installed.
      type: int
    not_current:
      description: Each source not current - C(key), C(state), C(fix), C(problems) from fable's status.
      type: list
      elements: dict
    foreign:
      description:
        - The rows of C(fable list --foreign) - hook entries neither fable's nor allowed by the
          inventory (C(id), C(host), C(scope), C(file), C(event), C(command), C(signals), C(risk)).
      type: list
      elements: dict
    high_risk:
      description: The foreign rows whose C(risk) is V(high).
      type: list
      elements: dict
    inert:
      description:
        - What fable's status reports as inert - a profile wired as planned whose entries a
          host will not run (a policy such as C(allowManagedHooksOnly) stops them) - each with
          C(source), C(host), C(path), its C(reason) (the profile's C(message), which names the
          setting and its file) and C(fix). Empty where status reports none.
      type: list
      elements: dict
    unreadable:
      description: The hook files C(fable list) could not parse.
      type: list
      elements: raw
status:
  description: fable's C(status --json) document.
  returned: success
  type: dict
foreign:
  description: fable's C(list --foreign --json) document.
  returned: success
  type: dict
'''

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.fable.fable.plugins.module_utils.fable import (
    COMMON_ARGS, fail, is_ok, run_fable)

ROW_FIELDS = ('id', 'host', 'scope', 'kind', 'file', 'event', 'matcher', 'command', 'signals',
              'risk')


def _reason(item):
    for k in ('reason', 'why', 'message'):
        if item.get(k):
            return item[k]
    return None


def _inert_item(item, **where):
    entry = dict(where)
    if isinstance(item, dict):
        entry.update(item)
        entry['reason'] = _reason(item)
    else:
        entry.update(entry=item, reason=None)
    return entry


def inert_entries(doc):
    """What status reports as inert: a top-level ``inert`` list, a source's, a profile's, or
    a profile whose ``state`` is ``inert``."""
    out = [_inert_item(i) for i in doc.get('inert') or []]
    for s in doc.get('sources') or []:
        key = s.get('key')
        out.extend(_inert_item(i, source=key) for i in s.get('inert') or [])
        for p in s.get('profiles') or []:
            where = dict(source=key, host=p.get('host'), path=p.get('path'))
            items = p.get('inert') or []
            out.extend(_inert_item(i, **where) for i in items)
            if p.get('state') == 'inert' and not items:
                # fable's shape: the profile's `message` is the reason, its `fix` the remedy.
                out.append(dict(where, reason=_reason(p), fix=p.get('fix')))
    return out


def digest(status, listing):
    sources = status.get('sources') or []
    not_current = [dict(key=s.get('key'), state=s.get('state'), fix=s.get('fix'),
                        problems=s.get('problems') or [])
                   for s in sources if s.get('state') != 'current']
    foreign = [dict((k, r[k]) for k in ROW_FIELDS if k in r)
               for r in listing.get('rows') or [] if r.get('owner', 'foreign') == 'foreign']
    inert = inert_entries(status)
    if not sources:
        state = 'not_installed'
    elif not_current:
        state = 'not_current'
    elif inert:
        state = 'inert'
    else:
        state = 'current'
    return dict(
        state=state,
        sources=len(sources),
        not_current=not_current,
        foreign=foreign,
        high_risk=[r for r in foreign if r.get('risk') == 'high'],
        inert=inert,
        unreadable=listing.get('unreadable') or [],
    )


def main():
    args = dict(project=dict(type='path'))
    args.update(COMMON_ARGS)
    module = AnsibleModule(argument_spec=args, supports_check_mode=True)
    project = module.params['project'] or os.environ.get('HOME') or '/'
    rc, status, out, err, argv = run_fable(module, ['status'])
    if not is_ok(rc, status):
        fail(module, 'fable status', rc, status, out, err, argv, changed=False)
    rc, listing, out, err, argv = run_fable(module, ['list', '--foreign'], cwd=project)
    if not is_ok(rc, listing):
        fail(module, 'fable list', rc, listing, out, err, argv, changed=False)
    module.exit_json(changed=False, machine=digest(status, listing), status=status,
                     foreign=listing)


if __name__ == '__main__':
    main()
