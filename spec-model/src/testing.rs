//! A minimal valid spec, for the tests of the crates that read specs (feature `testing`).

/// A minimal valid spec with one operation; `op_extra` is spliced into the operation,
/// `components_extra` into `components.schemas`.
pub fn fragment(op_extra: &str, components_extra: &str) -> String {
    format!(
        r#"
openapi: 3.0.3
info: {{title: t, version: v1}}
x-error-codes: ['500']
paths:
  /things:
    get:
      operationId: listThings
      x-idempotent: true
{op_extra}
      parameters:
        - {{name: g_nonce, in: query, required: true, schema: {{type: string}}}}
        - {{name: pageNum, in: query, schema: {{type: integer}}}}
        - {{name: pageSize, in: query, schema: {{type: integer}}}}
      responses:
        '200': {{description: ok, content: {{application/json: {{schema: {{$ref: '#/components/schemas/Reply'}}}}}}}}
        '299': {{description: err, content: {{application/json: {{schema: {{$ref: '#/components/schemas/Reply'}}}}}}}}
components:
  schemas:
    ErrorCode:
      type: string
      enum: ['500', '40000']
      x-enum-varnames: [NetworkException, ParameterEmpty]
      x-enum-descriptions: [network, empty]
    Reply:
      type: object
      properties:
        code: {{type: string}}
        data: {{$ref: '#/components/schemas/Page'}}
    Page:
      type: object
      properties:
        list: {{type: array, items: {{$ref: '#/components/schemas/Thing'}}}}
        hasNextPage: {{type: boolean}}
    Thing:
      type: object
      properties:
        name: {{type: string, maxLength: 3}}
{components_extra}
"#
    )
}
