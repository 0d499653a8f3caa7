#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: fable contributors
# SPDX-License-Identifier: MIT OR Apache-2.0 (as fable)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: fable_status
short_description: Each fable hook source's state, as facts
version_added: "0.1.0"
description:
  - Runs C(fable status --json) on the managed host and returns every installed source's
    state (V(never_migrated), V(half_applied), V(stale_but_stable) or V(current)) with its
    profiles, as the fact C(ansible_facts.fable) and as RV(status).
  - Reads only; never changed.
options:
  source:
    description: Only this hook source (a directory, or V(default) for the bundled evaluator).
    type: str
  scope:
    description:
      - Which of fable's installations to manage. V(user) (fable's default) is the user's own
        (C($FABLE_HOME), the agents' user settings); V(machine) is the machine-wide one, for
        every user of the host (fable's global flag C(--scope machine), before the
        subcommand).
      - >-
        V(machine) reads system paths fable keeps for root, so the task needs
        C(become: true), unless O(machine_root) roots them somewhere the remote user may read.
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
    description: Reads only, in check mode too.
    support: full
  diff_mode:
    description: Nothing changes, so there is no diff.
    support: none
  facts:
    description: Returns the fact C(fable).
    support: full
extends_documentation_fragment:
  - fable.fable.fable
author:
  - fable contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Read fable's state
  fable.fable.fable_status:

- name: Fail when a source is not current
  ansible.builtin.assert:
    that: ansible_facts.fable.current
    fail_msg: "not current: {{ ansible_facts.fable.not_current | join(', ') }}"
'''

RETURN = r'''
status:
  description: The same as the fact C(ansible_facts.fable).
  returned: success
  type: dict
  contains:
    home:
      description: The fable home (the document's C(home) when fable prints one, else C($FABLE_HOME), else C(~/.fable)).
      type: str
    inventory:
      description: The inventory fable reads by default (the document's C(inventory) when fable prints one).
      type: str
    sources:
      description: fable's status of each source (key, source, state, tree hashes, profiles, problems).
      type: list
      elements: dict
    current:
      description: True when a source is installed and every source is current.
      type: bool
    not_current:
      description: Keys of the sources that are not current (a source, a profile of it, inert included, or a git target).
      type: list
      elements: str
ansible_facts:
  description: C(fable), as RV(status).
  returned: success
  type: dict
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.fable.fable.plugins.module_utils.fable import (
    COMMON_ARGS, default_inventory, fable_home, fail, is_ok, run_fable)


def main():
    args = dict(source=dict(type='str'))
    args.update(COMMON_ARGS)
    module = AnsibleModule(argument_spec=args, supports_check_mode=True)
    cmd = ['status'] + ([module.params['source']] if module.params['source'] else [])
    rc, doc, out, err, argv = run_fable(module, cmd)
    if not is_ok(rc, doc):
        fail(module, 'fable status', rc, doc, out, err, argv, changed=False)
    sources = doc.get('sources', [])

    def settled(s):
        # A source is current when it, each of its profiles (not `inert`, not partly wired)
        # and each git target is, as `fable status --check` judges it.
        return (s.get('state') == 'current'
                and all(p.get('state') == 'current' for p in s.get('profiles') or [])
                and all(g.get('ok', True) for g in s.get('git') or []))

    not_current = [s.get('key') for s in sources if not settled(s)]
    status = dict(
        # fable's own word when its document carries it (the machine scope's home is fable's).
        home=doc.get('home') or fable_home(module),
        inventory=doc.get('inventory') or default_inventory(module),
        sources=sources,
        # Nothing installed is not current (as `fable status --check` says); fable's own
        # answer when its document carries one.
        current=doc['current'] if isinstance(doc.get('current'), bool) else bool(sources) and not not_current,
        not_current=not_current,
    )
    module.exit_json(changed=False, status=status, ansible_facts=dict(fable=status))


if __name__ == '__main__':
    main()
