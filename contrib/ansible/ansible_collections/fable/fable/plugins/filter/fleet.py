# -*- coding: utf-8 -*-
# Copyright: fable contributors
# SPDX-License-Identifier: MIT OR Apache-2.0 (as fable)
"""Filters the fable role uses to read a fleet inventory and its lock on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

try:
    import tomllib
except ImportError:  # Python before 3.11: the controller of ansible-core 2.19 has 3.11+.
    tomllib = None

from ansible.errors import AnsibleFilterError


def _parse(text, what):
    if tomllib is None:
        raise AnsibleFilterError('fable.fable filters need Python 3.11 (tomllib) on the controller')
    try:
        return tomllib.loads(text or '')
    except tomllib.TOMLDecodeError as e:
        raise AnsibleFilterError('the fable %s is not valid TOML: %s' % (what, e))


def fleet_git_sources(inventory, lock=None):
    """The inventory's git sources, each with the lock's commit and tree hash."""
    inv = _parse(inventory, 'inventory')
    pins = {}
    if lock:
        for pin in _parse(lock, 'lock').get('source', []):
            pins[pin.get('name')] = pin
    out = []
    for source in inv.get('source', []):
        if 'git' not in source:
            continue
        name, url, ref = source.get('name'), source['git'], source.get('ref')
        entry = dict(name=name, git=url, ref=ref, subdir=source.get('subdir'),
                     commit=None, tree_hash=None)
        if lock:
            pin = pins.get(name)
            if not pin or pin.get('git') != url or pin.get('ref') != ref:
                raise AnsibleFilterError(
                    'git source %s (%s %s) is not pinned in the lock; run `fable sync` where the '
                    'inventory is edited and pass its fleet.lock' % (name, url, ref))
            entry.update(commit=pin['commit'], tree_hash=pin['tree_hash'])
        out.append(entry)
    return out


def _key(k):
    if k and all(c.isalnum() or c in '-_' for c in k):
        return k
    return json.dumps(k)


def _value(v):
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return '[' + ', '.join(_value(x) for x in v) + ']'
    if isinstance(v, dict):
        return '{ ' + ', '.join('%s = %s' % (_key(k), _value(x)) for k, x in v.items()) + ' }'
    raise AnsibleFilterError('cannot write %r as TOML' % (v,))


def _table_array(v):
    return isinstance(v, list) and v and all(isinstance(x, dict) for x in v)


def _emit(table, prefix, lines):
    for k, v in table.items():
        if not isinstance(v, dict) and not _table_array(v):
            lines.append('%s = %s' % (_key(k), _value(v)))
    for k, v in table.items():
        name = prefix + _key(k)
        if isinstance(v, dict):
            if not v or any(not isinstance(x, dict) and not _table_array(x) for x in v.values()):
                lines.extend(['', '[%s]' % name])  # (a table of only tables needs no header)
            _emit(v, name + '.', lines)
        elif _table_array(v):
            for item in v:
                lines.extend(['', '[[%s]]' % name])
                _emit(item, name + '.', lines)


def fleet_localize(inventory, mirror_dir, sources):
    """The inventory with each git source of ``sources`` (from fleet_git_sources) read from
    ``file://MIRROR_DIR/NAME`` at its pinned commit (its ``ref`` when unpinned)."""
    inv = _parse(inventory, 'inventory')
    local = dict((s['name'], s) for s in sources or [])
    for source in inv.get('source', []):
        s = local.get(source.get('name'))
        if s and 'git' in source:
            source['git'] = 'file://%s/%s' % (mirror_dir.rstrip('/'), s['name'])
            source['ref'] = s.get('commit') or s['ref']
    lines = ['# Written by the fable.fable role: git sources are read from the checkouts',
             '# ansible.builtin.git made, at the commit the playbook\'s lock pins.']
    _emit(inv, '', lines)
    return '\n'.join(lines) + '\n'


class FilterModule(object):
    def filters(self):
        return dict(fleet_git_sources=fleet_git_sources, fleet_localize=fleet_localize)
