import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Every schema file imports z from here, so `.openapi()` exists before any schema is built.
extendZodWithOpenApi(z);

export { z };
