/*-------------------------------------------------------------------------
 * todos.c
 *	  Sandbox of the todo service (docs/sandbox-catalog-todos-generation.md): GET and POST
 *	  /todos, PUT and DELETE /todos/{id}.
 *
 * Design notes:
 *
 * - The document lists no Authorization header for these routes, so they
 *   take none, and there is ONE list shared by every caller (keyed or
 *   not), not one per partner.
 * - The list starts with a few fixed seed items (ids 1..3); new ids count
 *   up from there and are never reused, even after a delete.  Reset
 *   restores the seed items and the id counter.
 * - Bodies are checked strictly (unknown members, wrong types -> 400)
 *   before anything changes, so an update is all or nothing as the
 *   document requires.
 * - Choices where the document says "not shown" (201 on create, 200 on
 *   update, 404 on update of a missing id, 204 on delete) are documented in
 *   docs/sandbox-catalog-todos-generation.md.
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"

#define TODO_TITLE_MAX 1000		/* bytes */
#define TODO_MAX_ITEMS 10000	/* keeps a runaway client from eating memory */

typedef struct todo
{
	int64_t		id;
	char	   *title;
	bool		completed;
	int64_t		user_id;
} todo;

static todo *todos;
static int	ntodos;
static int	todos_cap;
static int64_t next_id;

static const struct
{
	const char *title;
	bool		completed;
	int64_t		user_id;
}			seed_todos[] = {
	{"Renew the vignette of the delivery van", false, 1},
	{"Check the fleet operating-cost snapshot", true, 1},
	{"Prepare the quarterly supplier review", false, 2},
};

static void
todos_clear(void)
{
	for (int i = 0; i < ntodos; i++)
		free(todos[i].title);
	ntodos = 0;
}

/* Appends a todo (title is copied); returns it.  Caller checked capacity. */
static todo *
todos_append(const char *title, bool completed, int64_t user_id)
{
	todo	   *t;

	if (ntodos == todos_cap)
	{
		todos_cap = todos_cap ? todos_cap * 2 : 16;
		todos = realloc(todos, sizeof(todo) * todos_cap);
		if (todos == NULL)
			abort();
	}
	t = &todos[ntodos++];
	t->id = next_id++;
	t->title = strdup(title);
	if (t->title == NULL)
		abort();
	t->completed = completed;
	t->user_id = user_id;
	return t;
}

/* Forgets everything and puts the seed items back (ids 1..3). */
static void
todos_reset(void)
{
	todos_clear();
	next_id = 1;
	for (size_t i = 0; i < sizeof(seed_todos) / sizeof(seed_todos[0]); i++)
		todos_append(seed_todos[i].title, seed_todos[i].completed,
					 seed_todos[i].user_id);
}

static json_t *
todo_json(const todo *t)
{
	return json_pack("{s:I, s:s, s:b, s:I}",
					 "id", (json_int_t) t->id,
					 "title", t->title,
					 "completed", t->completed,
					 "userId", (json_int_t) t->user_id);
}

/*
 * The fields of a CreateTodo or UpdateTodo body after checking; has_* say
 * which members were present.
 */
typedef struct todo_input
{
	bool		has_title;
	const char *title;			/* points into the JSON body */
	bool		has_completed;
	bool		completed;
	bool		has_user_id;
	int64_t		user_id;
} todo_input;

/*
 * Checks a todo body: an object whose members are title (string, 1 to
 * TODO_TITLE_MAX bytes), completed (boolean) and userId (integer >= 1).
 * "id" is accepted only on update and only if it equals path_id (so a
 * client may send back a whole Todo).  Anything else is rejected.
 * Returns false after replying 400.
 */
static bool
todo_input_check(sb_request *req, sb_response *resp, json_t *body,
				 bool create, int64_t path_id, todo_input *in)
{
	const char *key;
	json_t	   *value;

	memset(in, 0, sizeof(*in));
	if (!json_is_object(body))
	{
		sb_reply_error(req, resp, 400, "invalid_body",
					   "the body must be a JSON object");
		return false;
	}
	json_object_foreach(body, key, value)
	{
		if (strcmp(key, "title") == 0)
		{
			if (!json_is_string(value) || json_string_length(value) == 0 ||
				json_string_length(value) > TODO_TITLE_MAX)
			{
				sb_reply_error(req, resp, 400, "invalid_title",
							   "title must be a non-empty string of at most %d bytes",
							   TODO_TITLE_MAX);
				return false;
			}
			in->has_title = true;
			in->title = json_string_value(value);
		}
		else if (strcmp(key, "completed") == 0)
		{
			if (!json_is_boolean(value))
			{
				sb_reply_error(req, resp, 400, "invalid_completed",
							   "completed must be a boolean");
				return false;
			}
			in->has_completed = true;
			in->completed = json_is_true(value);
		}
		else if (strcmp(key, "userId") == 0)
		{
			if (!json_is_integer(value) || json_integer_value(value) < 1)
			{
				sb_reply_error(req, resp, 400, "invalid_user_id",
							   "userId must be an integer >= 1");
				return false;
			}
			in->has_user_id = true;
			in->user_id = json_integer_value(value);
		}
		else if (strcmp(key, "id") == 0 && !create)
		{
			if (!json_is_integer(value) || json_integer_value(value) != path_id)
			{
				sb_reply_error(req, resp, 400, "id_mismatch",
							   "id in the body must equal the id in the path");
				return false;
			}
		}
		else
		{
			sb_reply_error(req, resp, 400, "unknown_field",
						   "unknown or read-only member \"%s\"", key);
			return false;
		}
	}
	if (create && !in->has_title)
	{
		sb_reply_error(req, resp, 400, "missing_title", "title is required");
		return false;
	}
	if (create && !in->has_user_id)
	{
		sb_reply_error(req, resp, 400, "missing_user_id", "userId is required");
		return false;
	}
	return true;
}

/*
 * Reads {id}: 400 if not an integer, 404 if no such todo.  Returns the
 * array index or -1 after replying.  *id_out gets the parsed id.
 */
static int
todo_from_path(sb_request *req, sb_response *resp, int64_t *id_out)
{
	static const char *const none[] = {NULL};
	const char *s = sb_param(req, "id");
	int64_t		id;

	if (!sb_query_check(req, resp, none))
		return -1;
	if (s == NULL || !sb_parse_int64(s, &id))
	{
		sb_reply_error(req, resp, 400, "invalid_id", "id must be an integer");
		return -1;
	}
	*id_out = id;
	for (int i = 0; i < ntodos; i++)
		if (todos[i].id == id)
			return i;
	sb_reply_error(req, resp, 404, "todo_not_found", "no todo with id %lld",
				   (long long) id);
	return -1;
}

/* GET /todos: every todo, in creation order. */
static void
list_todos(sb_request *req, sb_response *resp)
{
	static const char *const none[] = {NULL};
	json_t	   *arr;

	if (!sb_query_check(req, resp, none))
		return;
	arr = json_array();
	for (int i = 0; i < ntodos; i++)
		json_array_append_new(arr, todo_json(&todos[i]));
	sb_reply_json(resp, 200, arr);
}

/* POST /todos: 201 with the new Todo. */
static void
create_todo(sb_request *req, sb_response *resp)
{
	static const char *const none[] = {NULL};
	json_t	   *body;
	todo_input	in;
	todo	   *t;

	if (!sb_query_check(req, resp, none))
		return;
	if ((body = sb_json_body(req, resp, true)) == NULL)
		return;
	if (!todo_input_check(req, resp, body, true, 0, &in))
	{
		json_decref(body);
		return;
	}
	if (ntodos >= TODO_MAX_ITEMS)
	{
		json_decref(body);
		sb_reply_error(req, resp, 409, "too_many_todos",
					   "the sandbox keeps at most %d todos", TODO_MAX_ITEMS);
		return;
	}
	t = todos_append(in.title, in.has_completed && in.completed, in.user_id);
	json_decref(body);
	resp->applied = true;
	sb_reply_json(resp, 201, todo_json(t));
}

/* PUT /todos/{id}: all given fields or none; 200 with the Todo. */
static void
update_todo(sb_request *req, sb_response *resp)
{
	int64_t		id;
	int			i = todo_from_path(req, resp, &id);
	json_t	   *body;
	todo_input	in;
	todo	   *t;

	if (i < 0)
		return;
	if ((body = sb_json_body(req, resp, true)) == NULL)
		return;
	if (!todo_input_check(req, resp, body, false, id, &in))
	{
		json_decref(body);
		return;
	}
	t = &todos[i];
	if (in.has_title)
	{
		char	   *copy = strdup(in.title);

		if (copy == NULL)
			abort();
		free(t->title);
		t->title = copy;
	}
	if (in.has_completed)
		t->completed = in.completed;
	if (in.has_user_id)
		t->user_id = in.user_id;
	json_decref(body);
	resp->applied = true;
	sb_reply_json(resp, 200, todo_json(t));
}

/* DELETE /todos/{id}: 204 with no body; permanent. */
static void
delete_todo(sb_request *req, sb_response *resp)
{
	int64_t		id;
	int			i = todo_from_path(req, resp, &id);

	if (i < 0)
		return;
	free(todos[i].title);
	memmove(&todos[i], &todos[i + 1], sizeof(todo) * (ntodos - i - 1));
	ntodos--;
	resp->applied = true;
	sb_reply_empty(resp, 204);
}

static const sb_route todo_routes[] = {
	{"GET", "/todos", 0, SB_STYLE_PLAIN, NULL, list_todos},
	{"POST", "/todos", 0, SB_STYLE_PLAIN, NULL, create_todo},
	{"PUT", "/todos/{id}", 0, SB_STYLE_PLAIN, NULL, update_todo},
	{"DELETE", "/todos/{id}", 0, SB_STYLE_PLAIN, NULL, delete_todo},
	{NULL, NULL, 0, 0, NULL, NULL}
};

const sb_service sb_service_todos = {
	.name = "todos",
	.routes = todo_routes,
	.init = todos_reset,
	.reset = todos_reset,
};
