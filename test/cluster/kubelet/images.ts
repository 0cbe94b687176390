// Image -> local command (the process kubelet has no container runtime). Pod command/args override the image's
// ENTRYPOINT/CMD exactly as Kubernetes defines it.
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const ImageCommand = z.strictObject({ entrypoint: z.array(z.string()), cmd: z.array(z.string()) });
export type ImageCommand = z.infer<typeof ImageCommand>;
const ImagesFile = z.object({ images: z.record(z.string(), ImageCommand) });

export type ImageMap = (image: string) => ImageCommand | undefined;

export function loadImageMap(file: string, vars: Record<string, string>): ImageMap {
  const { images } = ImagesFile.parse(JSON.parse(readFileSync(file, 'utf8')));
  const fill = (parts: string[]) => parts.map((p) => p.replace(/\{(\w+)\}/g, (m, k: string) => vars[k] ?? m));
  const entries = Object.entries(images).map(([pattern, command]) => ({
    match: new RegExp(`^${pattern.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\/]/g, '\\$&')).join('.*')}$`),
    command: { entrypoint: fill(command.entrypoint), cmd: fill(command.cmd) },
  }));
  return (image) => {
    const withTag = image.includes(':') || image.includes('@') ? image : `${image}:latest`;
    return entries.find((e) => e.match.test(withTag))?.command;
  };
}

/** The argv a container runs: Pod command replaces ENTRYPOINT (and drops CMD), Pod args replace CMD. */
export function containerArgv(image: ImageCommand, command: string[] | undefined, args: string[] | undefined): string[] {
  if (command && command.length > 0) return [...command, ...(args ?? [])];
  return [...image.entrypoint, ...(args && args.length > 0 ? args : image.cmd)];
}

/** Kubernetes `$(VAR)` expansion: defined names are replaced, `$$` escapes, unknown references stay as written. */
export function expand(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) => {
    if (match === '$$') return '$';
    return name !== undefined && name in env ? env[name]! : match;
  });
}
