export declare const OPENAPI_PATH: string;
export declare const WEB_TYPES_PATH: string;
export declare function webTypes(openapiPath?: string): Promise<string>;
