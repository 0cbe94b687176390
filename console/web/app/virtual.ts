// TanStack Virtual's framework-free core bound to Preact (the same few lines @tanstack/react-virtual has, without
// pulling preact/compat into the bundle): the instance lives as long as the component and re-renders it on change.
import { useLayoutEffect, useState } from 'preact/hooks';
import { Virtualizer, elementScroll, observeElementOffset, observeElementRect } from '@tanstack/virtual-core';
import type { PartialKeys, VirtualizerOptions } from '@tanstack/virtual-core';

export type VirtualOptions = PartialKeys<VirtualizerOptions<HTMLElement, HTMLElement>, 'observeElementRect' | 'observeElementOffset' | 'scrollToFn'>;

export function useVirtualizer(options: VirtualOptions): Virtualizer<HTMLElement, HTMLElement> {
  const [, setTick] = useState(0);
  const resolved: VirtualizerOptions<HTMLElement, HTMLElement> = {
    observeElementRect,
    observeElementOffset,
    scrollToFn: elementScroll,
    ...options,
    onChange: (instance, sync) => {
      setTick((t) => t + 1);
      options.onChange?.(instance, sync);
    },
  };
  const [instance] = useState(() => new Virtualizer<HTMLElement, HTMLElement>(resolved));
  instance.setOptions(resolved);
  useLayoutEffect(() => instance._didMount(), []);
  useLayoutEffect(() => instance._willUpdate());
  return instance;
}
