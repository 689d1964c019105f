/** `reserved-tag-keys/create` → `ReservedTagKeysCreate`: construct ids hold no `/`, `-` or `_`. */
export const pascalCase = (name: string) =>
  name.replace(/(^|[-_/])([a-zA-Z0-9])/g, (_, __, c: string) => c.toUpperCase());
