import { describe, expect, it } from 'vitest';
import { frame, resumeAfter } from './sse.ts';

describe('resumeAfter', () => {
  it.each([
    [{}, undefined, 0],
    [{ after: '41' }, undefined, 41],
    // The browser's own reconnect repeats the URL (?after of the first open) and adds Last-Event-ID: the header is newer.
    [{ after: '41' }, '97', 97],
    [{}, '0', 0],
    [{ after: '-1' }, undefined, 0],
    [{ after: '1e3' }, undefined, 0],
    [{ after: '12abc' }, undefined, 0],
    [{ after: '99999999999999999' }, undefined, 0],
    [{ after: '5' }, 'garbage', 5],
    [{ after: ['5', '6'] }, undefined, 0],
    [{}, ['8', '9'], 8],
  ])('query %j, Last-Event-ID %j -> %i', (query, header, expected) => {
    expect(resumeAfter(query, header)).toBe(expected);
  });
});

describe('frame', () => {
  it('is one event with an optional id and data on one line, even when the data holds newlines', () => {
    expect(frame('event', { message: 'a\nb' }, 12)).toBe('event: event\nid: 12\ndata: {"message":"a\\nb"}\n\n');
    expect(frame('caught-up', {})).toBe('event: caught-up\ndata: {}\n\n');
  });
});
