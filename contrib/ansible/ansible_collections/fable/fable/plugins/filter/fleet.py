# -*- coding: utf-8 -*-
# Copyright: fable contributors
# SPDX-License-Identifier: MIT OR Apache-2.0 (as fable)
"""Filters the fable role uses on the controller: to read a fleet inventory and its lock, and
to gather every machine's fable_report into one fleet report."""

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


STATES = ('current', 'inert', 'not_current', 'not_installed', 'failed', 'unreachable')


def _machine(result):
    """A host's digest from its registered fable_report result (failed or unreachable too)."""
    result = result if isinstance(result, dict) else {}
    if result.get('unreachable'):
        return dict(state='unreachable', error=result.get('msg') or 'unreachable')
    machine = result.get('machine')
    if result.get('failed') or not isinstance(machine, dict):
        return dict(state='failed', error=result.get('msg') or 'no fable_report result')
    return dict(machine)


def _add(hosts, host):
    if not hosts or hosts[-1] != host:
        hosts.append(host)


def _count(pairs):
    out = {}
    for k in pairs:
        out[k] = out.get(k, 0) + 1
    return dict(sorted(out.items()))


def fleet_report(hosts, hostvars, var='fable_machine_report'):
    """One document from every host's registered fable_report result (``hostvars[host][var]``):
    each machine's digest under ``machines`` and the fleet's counts under ``summary``."""
    machines = {}
    for host in hosts:
        try:
            result = hostvars[host].get(var)
        except (KeyError, AttributeError):
            result = None
        machines[str(host)] = _machine(result)
    rows = sorted(machines.items())
    digests = [m for h, m in rows]
    not_current = {}
    for host, m in rows:
        for s in m.get('not_current', []):
            entry = not_current.setdefault(s.get('key'), dict(machines=[], states={}))
            entry['machines'].append(host)
            entry['states'][s.get('state')] = entry['states'].get(s.get('state'), 0) + 1
    high_risk = {}
    for host, m in rows:
        for r in m.get('high_risk', []):
            key = '%s %s: %s' % (r.get('host'), r.get('event'), r.get('command'))
            _add(high_risk.setdefault(key, []), host)
    inert = {}
    for host, m in rows:
        for i in m.get('inert', []):
            _add(inert.setdefault(i.get('reason') or '(no reason given)', []), host)
    by_state = dict((s, 0) for s in STATES)
    by_state.update(_count(m['state'] for m in digests))
    summary = dict(
        machines=len(rows),
        by_state=by_state,
        not_current=not_current,
        foreign=sum(len(m.get('foreign', [])) for m in digests),
        foreign_machines=[h for h, m in rows if m.get('foreign')],
        high_risk=sum(len(m.get('high_risk', [])) for m in digests),
        high_risk_entries=high_risk,
        inert=sum(len(m.get('inert', [])) for m in digests),
        inert_reasons=inert,
        unreadable=sum(len(m.get('unreadable', [])) for m in digests),
        errors=dict((h, m['error']) for h, m in rows if m.get('error')),
    )
    return dict(schema=1, machines=machines, summary=summary)


def _hosts(names, limit=8):
    names = list(names)
    more = ' and %d more' % (len(names) - limit) if len(names) > limit else ''
    return ', '.join(names[:limit]) + more


def fleet_report_text(report):
    """The fleet report's summary in a few lines of plain text."""
    s = report['summary']
    by_state = ['%s %d' % (k, v) for k, v in s['by_state'].items()
                if v or k in ('current', 'not_current')]
    lines = ['fable fleet report: %d machines' % s['machines'],
             'machines by state: ' + ', '.join(by_state)]
    if s['not_current']:
        for key, e in sorted(s['not_current'].items()):
            states = ', '.join('%s %d' % kv for kv in sorted(e['states'].items()))
            lines.append('source %s not current on %d machines (%s): %s' % (
                key, len(e['machines']), states, _hosts(e['machines'])))
    else:
        lines.append('sources not current: none')
    lines.append('foreign entries: %d on %d machines; high risk: %d' % (
        s['foreign'], len(s['foreign_machines']), s['high_risk']))
    for entry, hosts in sorted(s['high_risk_entries'].items()):
        lines.append('  high risk: %s on %d machines: %s' % (entry, len(hosts), _hosts(hosts)))
    if s['inert_reasons']:
        lines.append('inert entries: %d' % s['inert'])
        for reason, hosts in sorted(s['inert_reasons'].items()):
            lines.append('  inert: %s on %d machines: %s' % (reason, len(hosts), _hosts(hosts)))
    else:
        lines.append('inert entries: none')
    if s['unreadable']:
        lines.append('unreadable hook files: %d' % s['unreadable'])
    for host, error in sorted(s['errors'].items()):
        lines.append('%s: %s' % (host, error))
    return '\n'.join(lines)


class FilterModule(object):
    def filters(self):
        return dict(fleet_git_sources=fleet_git_sources, fleet_localize=fleet_localize,
                    fleet_report=fleet_report, fleet_report_text=fleet_report_text)
