/** The JSON:API request documents tests send: `{ data: { type, attributes } }`. */

/** A request document of any type (`id`: a PATCH's `data.id`), one the API refuses included. */
export const requestDocument = (type: string, attributes: Record<string, unknown>, id?: string) => ({
  data: { ...(id === undefined ? {} : { id }), type, attributes },
});

/**
 * A reserved tag key to create or update: its key (any value: a test of the validation sends ones
 * the API refuses), and any other attribute (`'disable-overrides'`).
 */
export const keyDocument = (key: unknown, more: Record<string, unknown> = {}) =>
  requestDocument('reserved-tag-keys', { key, ...more });

/** A comment to create. `body` is any value: a test of the validation sends ones the API refuses. */
export const commentDocument = (body: unknown) => requestDocument('comments', { body });
